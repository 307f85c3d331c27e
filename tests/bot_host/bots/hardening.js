// A hosted Node bot that tries to make a user namespace (through util-linux's unshare, a child under the
// same filter) and to read PID 1's command line; one line per attempt, as hardening.py prints them.
const { spawnSync } = require('child_process');
const fs = require('fs');

const done = spawnSync('/usr/bin/unshare', ['--user', '--map-root-user', '/usr/bin/id', '-u'], { encoding: 'utf8' });
const said = `${done.stdout || ''}${done.stderr || ''}`.trim().replace(/\s+/g, ' ');
console.log(done.status === 0 ? `PROBE unshare-user ESCAPED ${said}` : `PROBE unshare-user blocked ${said}`);
try {
  console.log(`PID1 ${fs.readFileSync('/proc/1/cmdline').toString().replace(/\0/g, ' ')}`);
} catch (err) {
  console.log(`PID1 unreadable ${err.code}`);
}
console.log('PROBES DONE');
setInterval(() => {}, 1000);
