// grep: read FILE line by line and count the lines that contain WORD.
//   node grep.js FILE WORD
const fs = require("fs");
const readline = require("readline");

async function main() {
  const [file, word] = process.argv.slice(2);
  const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  let lines = 0;
  let hits = 0;
  for await (const line of rl) {
    lines++;
    if (line.includes(word)) hits++;
  }
  console.log(`${lines} lines, ${hits} contain ${word}`);
}

main();
