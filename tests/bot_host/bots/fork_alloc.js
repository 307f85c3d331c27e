// A hosted Node bot whose ALLOC_CHILDREN children (3; node processes of its own, spawned) each allocate
// and touch ALLOC_MIB MiB of Buffer and keep it: together they need more than the bot may have. Prints the
// lines fork_alloc.py prints: `ALLOC <i> done`, `CHILD <i> killed by signal <n>` or `CHILD <i> exited`.
const { spawn } = require('child_process');
const os = require('os');

const MIB = Number(process.env.ALLOC_MIB || '120');
const CHILDREN = Number(process.env.ALLOC_CHILDREN || '3');
const CHILD = `
const block = Buffer.alloc(${MIB} << 20);
for (let offset = 0; offset < block.length; offset += 4096) block[offset] = 1;
process.stdout.write('ALLOC ' + process.argv[1] + ' done\\n');
setInterval(() => {}, 1000);
`;

for (let i = 0; i < CHILDREN; i += 1) {
  const child = spawn(process.execPath, ['-e', CHILD, String(i)], { stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('exit', (code, signal) => {
    const ended = signal ? `killed by signal ${os.constants.signals[signal]}` : 'exited';
    process.stdout.write(`CHILD ${i} ${ended}\n`);
  });
}
process.stdout.write(`FORKED ${CHILDREN}\n`);
setInterval(() => {}, 1000);
