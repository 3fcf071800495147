// TCP echo server (Node net): each chunk written back as it comes.
// Usage: node echo_server.js HOST:PORT
const net = require("net");
const [host, port] = process.argv[2].split(":");
net.createServer((s) => {
    s.setNoDelay(true);
    s.on("data", (d) => s.write(d));
    s.on("error", () => {});
}).listen(+port, host);
