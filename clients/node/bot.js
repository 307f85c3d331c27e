#!/usr/bin/env node
// Example Caravanserai bot for Node.js. It loads protos/caravanserai/bot/v1/bot.proto at run time with
// @grpc/proto-loader (no generated code, no Python), opens one stream to the gateway with its token,
// sends Hello, answers every DecisionRequest and logs every fault the server reports.
//
// Usage: node bot.js --target 127.0.0.1:50051 --token TOKEN [--policy random|first] [--seed N]
//        [--matches N] [--concurrent N] [--game expedition-v1] [--explain]
// --explain: every answer carries a line of debug text (`this.debug(...)` in `ExampleBot.choose`, below).
// --no-stderr-debug: what `choose` writes to stderr (console.error) is not added to its answer's debug text.
// Environment: CARAVANSERAI_TARGET, CARAVANSERAI_TOKEN, CARAVANSERAI_PROTO_ROOT (default ../../protos),
// CARAVANSERAI_BOT_VERSION (the Hello's bot_version, default '1'; the ladder's bot host sets it to the version
// the owner uploaded, so that is the version the ladder shows and rates).
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
// Reconnect delays double from 250 ms up to this (with jitter), well inside the server's 10 s reconnect grace.
const MAX_BACKOFF_MS = 4000;

function parseArgs(argv) {
  const args = {
    target: process.env.CARAVANSERAI_TARGET || '127.0.0.1:50051',
    token: process.env.CARAVANSERAI_TOKEN || '',
    version: (process.env.CARAVANSERAI_BOT_VERSION || '').trim() || '1',
    policy: 'random',
    seed: 1,
    matches: 0,
    concurrent: 1,
    games: [],
    reconnect: true,
    explain: false,
    stderrDebug: true,
  };
  for (let i = 2; i < argv.length; i++) {
    const key = argv[i];
    const value = argv[i + 1];
    if (key === '--target') { args.target = value; i++; }
    else if (key === '--token') { args.token = value; i++; }
    else if (key === '--policy') { args.policy = value; i++; }
    else if (key === '--seed') { args.seed = Number(value); i++; }
    else if (key === '--matches') { args.matches = Number(value); i++; }
    else if (key === '--concurrent') { args.concurrent = Number(value); i++; }
    else if (key === '--game') { args.games.push(value); i++; }
    else if (key === '--no-reconnect') { args.reconnect = false; }
    else if (key === '--explain') { args.explain = true; }
    else if (key === '--no-stderr-debug') { args.stderrDebug = false; }
    else { console.error(`unknown argument ${key}`); process.exit(2); }
  }
  if (!['random', 'first'].includes(args.policy)) {
    console.error(`--policy must be random or first, not ${args.policy}`);
    process.exit(2);
  }
  return args;
}

// A small seeded generator (mulberry32) so a seeded bot is reproducible.
function makeRng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The bot's decisions. `choose(observation, legal)` returns the id of one legal action; inside it,
// `this.debug(...parts)` explains the decision to the bot's owner: the parts are joined with spaces, the calls
// with newlines, and the text goes with this answer as `Decision.debug`. The owner sees it beside that step
// on the match page and over REST (/api/v1/matches/<id>/debug/); opponents and spectators never do. The
// server keeps at most 2048 bytes of UTF-8 per decision (a longer text is cut, with a marker, never a fault)
// and removes control characters. Outside a decision the text is only logged. What `choose` writes to
// stderr (console.error) joins the text too, in order (unless --no-stderr-debug), and still reaches stderr (a
// hosted bot's log). Decisions run one at a time (choose is synchronous), so one decision's texts never mix
// with another's.
class ExampleBot {
  constructor(policy, rng, explain, stderrDebug) {
    this.policy = policy;
    this.rng = rng;
    this.explain = explain;
    this.stderrDebug = stderrDebug;
    this._parts = null; // the debug text of the decision being made, so far
  }

  debug(...parts) {
    const text = parts.map(String).join(' ');
    if (this._parts === null) { log('debug() outside a decision (not sent):', text); return; }
    this._parts.push(text + '\n');
  }

  choose(observation, legal) {
    const index = this.policy === 'first' ? 0 : Math.floor(this.rng() * legal.length);
    if (this.explain) {
      this.debug(`${this.policy}: action ${index + 1} of ${legal.length} at step ${observation.step}`);
      console.error(`considered ${legal.length} actions`); // stderr: also this decision's debug text
    }
    return legal[index].id;
  }

  // The answer to one request: the chosen id and what `debug` (and stderr) collected meanwhile.
  decide(observation, legal) {
    const parts = (this._parts = []);
    const write = process.stderr.write;
    if (this.stderrDebug) {
      process.stderr.write = function (chunk, ...rest) {
        parts.push(String(chunk));
        return write.call(process.stderr, chunk, ...rest);
      };
    }
    try {
      const actionId = this.choose(observation, legal);
      return { action_id: String(actionId), debug: parts.join('').replace(/\n+$/, '').slice(0, 16384) };
    } finally {
      process.stderr.write = write;
      this._parts = null;
    }
  }
}

function loadService() {
  const root = process.env.CARAVANSERAI_PROTO_ROOT || path.join(__dirname, '..', '..', 'protos');
  const definition = protoLoader.loadSync('caravanserai/bot/v1/bot.proto', {
    includeDirs: [root],
    keepCase: true, // field names exactly as in the .proto (match_id, legal_actions, ...)
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true, // message.message names the field that is set
  });
  return grpc.loadPackageDefinition(definition).caravanserai.bot.v1.BotService;
}

function log(...parts) {
  console.log(new Date().toISOString(), ...parts);
}

function main() {
  const args = parseArgs(process.argv);
  const BotService = loadService();
  const rng = makeRng(args.seed);
  const bot = new ExampleBot(args.policy, rng, args.explain, args.stderrDebug);
  let ended = 0;
  let backoffMs = 250;
  let stopping = false;

  const connect = () => {
    const client = new BotService(args.target, grpc.credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 20000, // the gateway tolerates pings every 5 s or more
      'grpc.keepalive_timeout_ms': 10000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.use_local_subchannel_pool': 1, // each reconnection really dials, not a shared subchannel's backoff
    });
    const metadata = new grpc.Metadata();
    metadata.add('authorization', `Bearer ${args.token}`);
    const call = client.Connect(metadata);
    let finished = false; // 'error' and 'end' may both fire: reconnect once
    call.write({
      hello: {
        bot_name: 'node-example',
        bot_version: args.version,
        sdk: 'node-example/0.1.0',
        games: args.games,
        max_concurrent_matches: args.concurrent,
      },
    });

    call.on('data', (message) => {
      switch (message.message) {
        case 'welcome':
          backoffMs = 250;
          log(`connected as ${message.welcome.bot_name} (session ${message.welcome.session_id})`);
          break;
        case 'match_started': {
          const m = message.match_started;
          log(`match ${m.match_id} ${m.resumed ? 'resumed' : 'started'}: ${m.game_id} seat ${m.seat}`);
          break;
        }
        case 'decision_request': {
          const r = message.decision_request;
          const observation = JSON.parse(r.observation_json);
          const legal = r.legal_actions.map((a) => ({ id: a.id, kind: a.kind, details: JSON.parse(a.details_json || '{}') }));
          const answer = bot.decide(observation, legal);
          call.write({ decision: { match_id: r.match_id, request_id: r.request_id, ...answer } });
          break;
        }
        case 'match_ended': {
          const e = message.match_ended;
          ended += 1;
          log(`match ${e.match_id} ended: rank ${e.ranks[e.seat]} scores ${JSON.stringify(e.scores)} (${e.reason})`);
          for (const f of e.faults) log(`  fault at step ${f.step}: ${f.kind}: ${f.reason}`);
          if (args.matches > 0 && ended >= args.matches) {
            stopping = true;
            call.end();
            client.close();
            log(`played ${ended} match(es); exiting`);
            process.exit(0);
          }
          break;
        }
        case 'fault_notice': {
          const n = message.fault_notice;
          log(`fault in match ${n.match_id} at step ${n.fault.step}: ${n.fault.kind}: ${n.fault.reason}`);
          break;
        }
        case 'goodbye':
          // nothing more for this bot on this server (a local runner that played its matches): do not reconnect
          stopping = true;
          log(`server said goodbye: ${message.goodbye.message}; exiting`);
          break;
        case 'error': {
          const e = message.error;
          log(`server refused a message: ${e.reason} (status ${e.status_code}): ${e.message}`);
          break;
        }
        default:
          break;
      }
    });

    call.on('error', (err) => {
      if (finished) return;
      finished = true;
      log(`stream failed: ${grpc.status[err.code]}: ${err.details}`);
      client.close();
      const fatal = [grpc.status.UNAUTHENTICATED, grpc.status.INVALID_ARGUMENT, grpc.status.PERMISSION_DENIED,
        grpc.status.FAILED_PRECONDITION].includes(err.code);
      if (fatal) {
        log('refused; not reconnecting');
        process.exit(2);
      }
      if (stopping) process.exit(0);
      if (!args.reconnect || stopping) process.exit(1);
      const delay = backoffMs * (0.5 + rng() / 2);
      backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
      setTimeout(connect, delay);
    });
    call.on('end', () => {
      if (finished) return;
      finished = true;
      client.close();
      if (stopping) process.exit(0);
      log('stream ended; reconnecting');
      if (!args.reconnect) process.exit(1);
      setTimeout(connect, backoffMs);
    });
  };

  process.on('SIGTERM', () => process.exit(0));
  connect();
}

main();
