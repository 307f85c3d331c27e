"""A hosted bot whose three forked children each allocate (and touch) ALLOC_MIB MiB and keep it: together
they need more than the bot may have. `ALLOC <i> done` when child i has it all, `CHILD <i> killed by
signal <n>` when it died. Each line is one write: the children share the output pipe."""

import os
import time

MIB = int(os.environ.get("ALLOC_MIB", "120"))


def say(line):
    os.write(1, f"{line}\n".encode())


children = {}
for i in range(3):
    pid = os.fork()
    if pid == 0:
        block = bytearray(MIB << 20)
        for offset in range(0, len(block), 4096):
            block[offset] = 1
        say(f"ALLOC {i} done")
        time.sleep(600)
        os._exit(0)
    children[pid] = i
say(f"FORKED {len(children)}")
while children:
    pid, status = os.waitpid(-1, 0)
    ended = f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "exited"
    say(f"CHILD {children.pop(pid)} {ended}")
