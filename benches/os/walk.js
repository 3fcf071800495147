// walk: every entry under ROOT (symbolic links not followed); prints the
// number of files and directories and the files' total size in bytes.
//   node walk.js ROOT
const fs = require("fs");
const path = require("path");

let files = 0;
let dirs = 0;
let bytes = 0;

function visit(dir) {
  const entries = fs.readdirSync(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      dirs++;
      visit(p);
    } else if (e.isFile()) {
      files++;
      bytes += fs.lstatSync(p).size;
    }
  }
}

visit(process.argv[2]);
console.log(`${files} files, ${dirs} dirs, ${bytes} bytes`);
