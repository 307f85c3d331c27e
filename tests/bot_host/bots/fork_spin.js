// A hosted Node bot that spawns three node children spinning the CPU forever, and spins itself.
const { spawn } = require('child_process');

for (let i = 0; i < 3; i += 1) {
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}
process.stdout.write('SPINNERS 3\n');
for (;;) {} // eslint-disable-line no-empty
