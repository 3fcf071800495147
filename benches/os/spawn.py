# spawn: start `true` 2,000 times with at most 16 running at once and wait for
# every one. Prints how many exited with status 0.
import subprocess
from concurrent.futures import ThreadPoolExecutor

N = 2000
INFLIGHT = 16


def run(i):
    return subprocess.run(["true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL).returncode == 0


with ThreadPoolExecutor(INFLIGHT) as pool:
    ok = sum(pool.map(run, range(N)))
print(f"{N} started, {ok} ok")
