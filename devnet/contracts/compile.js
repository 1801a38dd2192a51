// Compiles DevToken.sol and Sweep.sol with the solc-js pinned in package.json and
// writes, for each deployable contract, <Name>.bin (creation bytecode, hex, no 0x,
// trailing newline) and <Name>.abi.json. Run through ./compile.sh, which installs
// solc first.
'use strict';

const fs = require('fs');
const path = require('path');
const solc = require('solc');

const dir = __dirname;
// Each deployable contract and the source that defines it.
const contracts = [
  ['DevToken.sol', 'DevToken'],
  ['DevToken.sol', 'DevTokenNoReturn'],
  ['Sweep.sol', 'SweepBatch'],
  ['Sweep.sol', 'SweepDelegate'],
];
const sources = {};
for (const [file] of contracts) {
  sources[file] = { content: fs.readFileSync(path.join(dir, file), 'utf8') };
}

const input = {
  language: 'Solidity',
  sources,
  settings: {
    // Pinned so the bytecode runs on any chain the gateway is tested against, and
    // does not change when solc's default EVM version moves on.
    evmVersion: 'cancun',
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};

const output = JSON.parse(solc.compile(JSON.stringify(input)));
let failed = false;
for (const e of output.errors || []) {
  process.stderr.write(e.formattedMessage || e.message);
  if (e.severity === 'error') failed = true;
}
if (failed) process.exit(1);

for (const [source, name] of contracts) {
  const c = output.contracts[source][name];
  if (!c || !c.evm.bytecode.object) {
    process.stderr.write(`compile.js: no bytecode for ${name}\n`);
    process.exit(1);
  }
  fs.writeFileSync(path.join(dir, `${name}.bin`), c.evm.bytecode.object + '\n');
  fs.writeFileSync(path.join(dir, `${name}.abi.json`), JSON.stringify(c.abi, null, 2) + '\n');
  process.stdout.write(`wrote ${name}.bin ${name}.abi.json\n`);
}
process.stdout.write(`solc ${solc.version()}\n`);
