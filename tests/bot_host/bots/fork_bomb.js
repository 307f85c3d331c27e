// A hosted Node bot that spawns sleeping children until it is refused, then reports how far it got.
const { spawn } = require('child_process');

let children = 0;
function more() {
  const child = spawn('/bin/sleep', ['600'], { stdio: 'ignore' });
  child.on('error', (err) => {
    process.stdout.write(`FORK refused after ${children} children: ${err.code}\n`);
  });
  child.on('spawn', () => {
    children += 1;
    setImmediate(more);
  });
}
more();
setInterval(() => {}, 1000);
