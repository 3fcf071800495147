// spawn: start `true` 2,000 times with at most 16 running at once and wait for
// every one. Prints how many exited with status 0.
const { spawn } = require("child_process");

const N = 2000;
const INFLIGHT = 16;

function run() {
  return new Promise((resolve) => {
    const p = spawn("true", [], { stdio: ["ignore", "ignore", "inherit"] });
    p.on("error", () => resolve(false));
    p.on("close", (code) => resolve(code === 0));
  });
}

async function main() {
  let next = 0;
  let ok = 0;
  // INFLIGHT workers, each starting the next command when its last one ends.
  const worker = async () => {
    while (next < N) {
      next++;
      if (await run()) ok++;
    }
  };
  await Promise.all(Array.from({ length: INFLIGHT }, worker));
  console.log(`${N} started, ${ok} ok`);
}

main();
