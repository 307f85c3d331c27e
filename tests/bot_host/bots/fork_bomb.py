"""A hosted bot that forks until it is refused, then reports how far it got and waits."""

import os
import time

children = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        children += 1
except OSError as exc:
    print(f"FORK refused after {children} children: {exc}", flush=True)
time.sleep(600)
