// String splitting: 500,000 CSV rows built with template literals and joined
// into one 12.6 MB text, split into lines, each line split on commas; sums one
// numeric field (parsed with parseInt), counts a boolean field and the name
// letters, and prints both ends of the text.
function main(n) {
    const rows = [];
    for (let i = 0; i < n; i++) {
        rows.push(`${i},name${i % 1000},${(i * 7) % 10007},${i % 3 === 0}`);
    }
    const text = rows.join("\n");
    const lines = text.split("\n");
    let total = 0, yes = 0, letters = 0;
    for (const line of lines) {
        const f = line.split(",");
        total += parseInt(f[2], 10);
        if (f[3] === "true") yes += 1;
        letters += f[1].length;
    }
    console.log("lines:", lines.length, "chars:", text.length);
    console.log("total:", total, "true:", yes, "letters:", letters);
    console.log(lines[0]);
    console.log(lines[lines.length - 1]);
}

main(500000);
