"""A hosted bot that spins the CPU forever."""

print("SPIN start", flush=True)
while True:
    pass
