// A hosted Node bot that reaches for the kernel's privileged corners every way Node can, one line per
// attempt as hardening.py prints them (`PROBE <name> blocked <why>` or `PROBE <name> ESCAPED <what>`):
// - Node itself has no raw system calls. It can run the tools under /usr, which the sandbox shows
//   read-only: util-linux's unshare and mount, and the system's python3, which runs hardening.py (packed
//   beside this file) to make every call that file makes (`PROBE py-<name> ...`), as this bot's child
//   under the same filter;
// - io_uring is what Node's own libuv uses when UV_USE_IO_URING=1: a child node with it set reads files
//   and counts its io_uring rings (`anon_inode:[io_uring]` descriptors).
// Then what it sees as PID 1's command line, and `PROBES DONE`.
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');

function tool(name, argv) {
  const done = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 20000 });
  const said = `${done.stdout || ''}${done.stderr || ''}${done.error ? done.error.code : ''}`.trim().replace(/\s+/g, ' ');
  console.log(done.status === 0 ? `PROBE ${name} ESCAPED ${said}` : `PROBE ${name} blocked ${said}`);
}

const URING = `
const fs = require('fs');
(async () => {
  for (let i = 0; i < 5; i += 1) await fs.promises.readFile('/proc/self/status');
  const links = fs.readdirSync('/proc/self/fd').map((fd) => { try { return fs.readlinkSync('/proc/self/fd/' + fd); } catch { return ''; } });
  process.stdout.write(String(links.filter((link) => link.includes('io_uring')).length));
})();
`;

function ioUring() {
  const env = { ...process.env, UV_USE_IO_URING: '1' };
  const done = spawnSync(process.execPath, ['-e', URING], { encoding: 'utf8', env, timeout: 20000 });
  const rings = Number(done.stdout);
  if (done.status !== 0 || Number.isNaN(rings)) {
    console.log(`PROBE libuv-io_uring ERROR ${done.status} ${done.stderr}`);
  } else {
    console.log(rings === 0 ? 'PROBE libuv-io_uring blocked no ring (read through the thread pool)' : `PROBE libuv-io_uring ESCAPED ${rings} rings`);
  }
}

function viaPython(next) {
  let called = false;
  const then = () => { if (!called) { called = true; next(); } };
  const child = spawn('/usr/bin/python3', ['-I', path.join(__dirname, 'hardening.py')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let buffered = '';
  child.stdout.on('data', (chunk) => {
    buffered += chunk.toString();
    let end;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (line.startsWith('PROBE ')) console.log(`PROBE py-${line.slice(6)}`);
      if (line === 'PROBES DONE') child.kill('SIGKILL');
    }
  });
  child.on('error', (err) => { console.log(`PROBE python3 blocked ${err.code}`); then(); });
  child.on('exit', then);
}

tool('unshare-user', ['/usr/bin/unshare', '--user', '--map-root-user', '/usr/bin/id', '-u']);
tool('unshare-mount', ['/usr/bin/unshare', '--mount', '/usr/bin/id', '-u']);
tool('mount', ['/usr/bin/mount', '-t', 'tmpfs', 'none', '/tmp']);
ioUring();
viaPython(() => {
  try {
    console.log(`PID1 ${fs.readFileSync('/proc/1/cmdline').toString().replace(/\0/g, ' ')}`);
  } catch (err) {
    console.log(`PID1 unreadable ${err.code}`);
  }
  console.log('PROBES DONE');
  setInterval(() => {}, 1000);
});
