#!/usr/bin/env bash
# `npm run check:package`: checks ctxfold as it would be published, with whatever node is first on
# PATH. Builds, packs the tarball, lints it (publint: errors fail, warnings and suggestions are
# printed; attw with the esm-only profile: ctxfold is ESM only, so `require` from CommonJS and
# node10 resolution are not checked), then installs it into an empty ESM project and there:
#   1. imports every subpath of package.json "exports" (read from the installed package.json)
#      with no optional peer installed: each exports at least one name, or fails naming the
#      optional peer to install;
#   2. runs the `ctxfold` bin (`--help`, and `--version` must print the package's version);
#   3. installs the optional peers (at the versions ctxfold is tested against), typescript and
#      @types/node; imports every subpath again, each must now export at least one name; and
#      type-checks a file importing every subpath (strict, none of them `any`) under
#      moduleResolution nodenext without skipLibCheck (every shipped declaration checked against
#      the real peers) and under bundler with it (the subpaths' types resolve; checking the
#      libraries a second time would double the time for nothing new).
# With --runtime-only, only the tarball's contents, the install, the imports and the bin are
# checked (the parts that depend on the Node that runs them; the linters and tsc answer the same
# on any Node). Nothing is written outside a temporary directory, which is removed at the end.
set -euo pipefail
runtime_only=false
case "${1:-}" in
  '') ;;
  --runtime-only) runtime_only=true ;;
  *) echo "usage: $0 [--runtime-only]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
root=$PWD

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
quiet=(--no-audit --no-fund --prefer-offline --loglevel=error)
t0=$SECONDS
took() { echo "-- $1: $((SECONDS - t0)) s"; t0=$SECONDS; }

echo "== check:package under Node $(node --version) =="
npm run build --silent
npm pack --silent --pack-destination "$tmp" >/dev/null
tarball=$(ls "$tmp"/ctxfold-*.tgz)
echo "packed $(basename "$tarball"): $(wc -c <"$tarball") bytes, $(tar -tzf "$tarball" | wc -l) files"
# What ships: the compiled sources (each .js and .d.ts from a src/ .ts, so no stale output of a
# deleted file), package.json and the documents; no source maps (their sources do not ship).
tar -tzf "$tarball" | node -e '
  const { existsSync } = require("node:fs");
  const docs = new Set(["package/package.json", "package/README.md", "package/CHANGELOG.md", "package/LICENSE"]);
  const wrong = require("node:fs").readFileSync(0, "utf8").split("\n").filter(Boolean).filter((entry) => {
    if (docs.has(entry)) return false;
    const m = /^package\/dist\/(src\/.+)\.(?:js|d\.ts)$/.exec(entry);
    return !(m && existsSync(`${m[1]}.ts`));
  });
  if (wrong.length > 0) { console.error(`files that should not ship:\n  ${wrong.join("\n  ")}`); process.exit(1); }
'
took "build and pack"

if ! $runtime_only; then
  "$root/node_modules/.bin/publint" run --pack false "$tarball"
  "$root/node_modules/.bin/attw" --profile esm-only --format table-flipped --no-emoji --no-color "$tarball"
  took "publint and attw"
fi

app=$tmp/app
mkdir "$app"
cd "$app"
npm init -y >/dev/null
npm pkg set type=module >/dev/null && npm pkg set private=true --json >/dev/null
npm install "${quiet[@]}" "$tarball"
took "install into an empty project"

# 1. Every subpath loads and exports something; with --peers-missing, one that cannot load may
# instead fail with the message that names its missing optional peer.
cat >imports.mjs <<'EOF'
import { readFileSync } from 'node:fs';
const pkg = JSON.parse(readFileSync('node_modules/ctxfold/package.json', 'utf8'));
const subpaths = Object.keys(pkg.exports);
if (subpaths.some((subpath) => subpath.includes('*'))) throw new Error('exports: a pattern subpath cannot be imported as it is; list it here by its files');
const peersMissing = process.argv.includes('--peers-missing');
const optionalPeers = Object.keys(pkg.peerDependenciesMeta ?? {}).filter((name) => pkg.peerDependenciesMeta[name].optional);
const namesMissingPeer = (message) =>
  optionalPeers.find((peer) => message.includes(`needs the package ${peer}, which is not installed`));
let failed = 0;
for (const subpath of subpaths) {
  const specifier = subpath === '.' ? 'ctxfold' : `ctxfold/${subpath.slice(2)}`;
  try {
    const ns = subpath.endsWith('.json')
      ? await import(specifier, { with: { type: 'json' } })
      : await import(specifier);
    const names = Object.keys(ns).filter((name) => name !== 'default' || subpath.endsWith('.json'));
    if (names.length === 0) throw new Error('exports nothing');
    console.log(`ok ${specifier}: ${names.length} export(s)`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const peer = peersMissing ? namesMissingPeer(message) : undefined;
    if (peer) {
      console.log(`ok ${specifier}: without ${peer}, says to install it`);
    } else {
      failed++;
      console.error(`FAIL ${specifier}: ${message}`);
    }
  }
}
if (failed > 0) process.exit(1);
EOF
node imports.mjs --peers-missing

# 2. The bin, as npm linked it.
./node_modules/.bin/ctxfold --help >help.txt
grep -q 'ctxfold compress' help.txt || { echo "ctxfold --help printed no usage" >&2; cat help.txt >&2; exit 1; }
want=$(node -p "require('$root/package.json').version")
got=$(./node_modules/.bin/ctxfold --version)
[[ $got == *"$want"* ]] || { echo "ctxfold --version printed '$got', expected $want" >&2; exit 1; }
echo "ok bin: ctxfold --help, ctxfold --version ($got)"
took "imports and bin"
if $runtime_only; then echo "== check:package passed (runtime only) =="; exit 0; fi

# 3. Types resolve for every subpath, as a TypeScript user with the peers installed sees them.
peers=$(node -e '
  const pkg = require(process.argv[1]);
  const dev = pkg.devDependencies;
  const specs = ["typescript", "@types/node", ...Object.keys(pkg.peerDependencies ?? {})]
    .map((name) => { if (!dev[name]) throw new Error(`devDependencies has no ${name}`); return `${name}@${dev[name]}`; });
  console.log(specs.join(" "));
' "$root/package.json")
# shellcheck disable=SC2086 # one word per package spec
npm install "${quiet[@]}" --save-dev $peers
node imports.mjs
took "peers, typescript and imports with the peers"
node -e '
  const pkg = require("./node_modules/ctxfold/package.json");
  const lines = ["type IsAny<T> = 0 extends 1 & T ? true : false;"];
  Object.keys(pkg.exports).forEach((subpath, i) => {
    const specifier = subpath === "." ? "ctxfold" : `ctxfold/${subpath.slice(2)}`;
    const attrs = subpath.endsWith(".json") ? " with { type: \"json\" }" : "";
    lines.push(subpath.endsWith(".json")
      ? `import m${i} from ${JSON.stringify(specifier)}${attrs};`
      : `import * as m${i} from ${JSON.stringify(specifier)};`);
    lines.push(`export const typed${i}: IsAny<typeof m${i}> = false;`);
  });
  require("node:fs").writeFileSync("check.ts", lines.join("\n") + "\n");
'
for mode in nodenext bundler; do
  if [[ $mode == nodenext ]]; then module=nodenext skip_lib=false; else module=preserve skip_lib=true; fi
  cat >"tsconfig.$mode.json" <<EOF
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "$module",
    "moduleResolution": "$mode",
    "strict": true,
    "skipLibCheck": $skip_lib,
    "resolveJsonModule": true,
    "types": ["node"],
    "noEmit": true
  },
  "files": ["check.ts"]
}
EOF
  ./node_modules/.bin/tsc -p "tsconfig.$mode.json"
  echo "ok types: every subpath under moduleResolution $mode"
  took "tsc ($mode)"
done
echo "== check:package passed =="
