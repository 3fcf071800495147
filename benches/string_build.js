// String building: 1,000,000 appends of short words with `s += w`, then the
// length and both ends of the result. V8 makes `+=` a rope (no copy per
// append) and flattens it once, at the first slice.
const words = ["alpha", "be", "gamma", "d", "epsilon", "zeta", "eta"];
let s = "";
for (let i = 0; i < 1000000; i++) {
    s += words[i % 7];
}
console.log(s.length);
console.log(s.slice(0, 24));
console.log(s.slice(s.length - 24));
