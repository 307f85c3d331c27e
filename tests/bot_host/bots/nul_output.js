// A hosted Node bot that writes a NUL byte, invalid UTF-8 and a lone surrogate's bytes in one line, then
// exits: what its owner sees must be stored cleaned.
process.stdout.write(Buffer.concat([
  Buffer.from('nul\0here '), Buffer.from([0xff, 0xfe]), Buffer.from(' sur '), Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from(' end\n'),
]));
setTimeout(() => process.exit(1), 200);
