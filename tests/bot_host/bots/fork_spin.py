"""A hosted bot that forks three children spinning the CPU forever, and spins itself."""

import os

for _ in range(3):
    if os.fork() == 0:
        while True:
            pass
print("SPINNERS 3", flush=True)
while True:
    pass
