#!/usr/bin/env bash
# The playground example in the browser (WebGL2).
#
#   scripts/web.sh build              # size-optimised build into target/web/
#   scripts/web.sh serve [PORT]       # serve target/web/ on localhost (default 8000)
#   scripts/web.sh screenshot [OUT]   # load the page in headless Chromium, save a
#                                     # PNG (default docs/playground-web.png)
#
# `build` installs the Rust target and wasm-bindgen-cli (scripts/wasm-tools.sh)
# and wasm-opt (into the same cache directory).
# `screenshot` installs Debian's chromium with apt-get if it is missing (as
# root, or through sudo) and playwright-core from npm into a cache directory
# (WEB_TOOLS_DIR, default ~/.cache/bevy_anyangle/web); it fails if the page's
# console shows a panic or the page throws. WEB_QUERY (e.g. '?agents=50')
# is added to the page's address, WEB_WAIT_MS (default 10000) is how long it
# runs before the picture.
set -euo pipefail
cd "$(dirname "$0")/.."

out_dir=target/web
playwright_version=1.65.1

usage() {
    sed -n '2,16s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

# wasm-opt (Binaryen's optimiser) from crates.io, built once into a cache
# directory (a C++ build of some minutes); prints its path.
wasm_opt_version=0.116.1
wasm_opt() {
    local root="${WASM_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bevy_anyangle}/wasm-opt-$wasm_opt_version"
    if [ ! -x "$root/bin/wasm-opt" ]; then
        echo "== installing wasm-opt $wasm_opt_version into $root (some minutes)" >&2
        CARGO_TARGET_DIR="$root/build" cargo install wasm-opt --version "=$wasm_opt_version" \
            --locked --root "$root" --force >&2
        rm -rf "$root/build"
    fi
    echo "$root/bin/wasm-opt"
}

build() {
    local bin opt target_dir wasm
    bin=$(scripts/wasm-tools.sh)
    opt=$(wasm_opt)
    # The full `bevy` crate asks for a newer Rust than this crate's
    # rust-version, hence --ignore-rust-version. The `web` profile (see
    # Cargo.toml) optimises for size, with no debug info.
    echo "== building the playground for wasm32-unknown-unknown (profile web)"
    cargo build --profile web --locked --example playground --features visual \
        --ignore-rust-version --target wasm32-unknown-unknown
    target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
    wasm="$target_dir/wasm32-unknown-unknown/web/examples/playground.wasm"
    echo "== wasm-bindgen -> $out_dir/"
    rm -rf "$out_dir"
    mkdir -p "$out_dir"
    "$bin/wasm-bindgen" --target web --no-typescript --remove-name-section \
        --out-dir "$out_dir" --out-name playground "$wasm"
    # The features rustc's wasm32 target uses by default, which wasm-opt
    # must be told of.
    echo "== wasm-opt -Oz"
    "$opt" -Oz --enable-bulk-memory --enable-mutable-globals --enable-sign-ext \
        --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue \
        "$out_dir/playground_bg.wasm" -o "$out_dir/playground_bg.wasm"
    cp web/index.html "$out_dir/"
    ls -l "$out_dir"
}

need_page() {
    if [ ! -s "$out_dir/index.html" ] || [ ! -s "$out_dir/playground_bg.wasm" ]; then
        echo "no page in $out_dir: run scripts/web.sh build first" >&2
        exit 1
    fi
}

serve() {
    local port=${1:-8000}
    need_page
    echo "== http://127.0.0.1:$port/ (Ctrl-C stops)"
    exec python3 -m http.server "$port" --bind 127.0.0.1 --directory "$out_dir"
}

# A free TCP port on localhost.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

screenshot() {
    local out=${1:-docs/playground-web.png}
    need_page
    if ! command -v chromium >/dev/null; then
        echo "== installing chromium"
        local sudo=()
        if [ "$(id -u)" -ne 0 ]; then
            sudo=(sudo)
        fi
        "${sudo[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium
    fi
    command -v node >/dev/null || {
        echo "screenshot needs node (and npm) on PATH" >&2
        exit 1
    }
    local tools="${WEB_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bevy_anyangle/web}"
    if [ "$(cat "$tools/node_modules/playwright-core/package.json" 2>/dev/null |
        sed -n 's/^ *"version": "\([^"]*\)".*/\1/p')" != "$playwright_version" ]; then
        echo "== installing playwright-core $playwright_version into $tools"
        mkdir -p "$tools"
        npm install --prefix "$tools" --no-save --no-audit --no-fund \
            "playwright-core@$playwright_version" >&2
    fi

    local port server
    port=$(free_port)
    python3 -m http.server "$port" --bind 127.0.0.1 --directory "$out_dir" >/dev/null 2>&1 &
    server=$!
    # shellcheck disable=SC2064
    trap "kill $server 2>/dev/null || true" EXIT

    mkdir -p "$(dirname "$out")"
    rm -f "$out"
    cat >"$tools/screenshot.cjs" <<'EOF'
// Loads the page in headless Chromium, waits, saves a screenshot; prints the
// page's console and fails on a panic or an uncaught exception.
const { chromium } = require("playwright-core");
const fs = require("fs");
const os = require("os");
const path = require("path");

const [url, out, waitMs] = process.argv.slice(2);

(async () => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "playground-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      "--no-sandbox",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // WebGL2 without a GPU: ANGLE on SwiftShader.
      "--use-angle=swiftshader",
      "--enable-unsafe-swiftshader",
    ],
  });
  const page = context.pages()[0] || (await context.newPage());
  const problems = [];
  page.on("console", (msg) => {
    const text = msg.text();
    console.log(`[console.${msg.type()}] ${text}`);
    if (text.includes("panicked at")) problems.push(`panic: ${text}`);
  });
  page.on("pageerror", (err) => {
    const text = String(err && err.message);
    if (text.startsWith("Using exceptions for control flow")) return;
    console.log(`[pageerror] ${text}`);
    problems.push(`uncaught: ${text}`);
  });
  await page.goto(url, { waitUntil: "load" });
  const webgl2 = await page.evaluate(
    () => !!document.createElement("canvas").getContext("webgl2"),
  );
  console.log(`WebGL2: ${webgl2 ? "yes" : "no"}`);
  await page.waitForTimeout(Number(waitMs));
  await page.screenshot({ path: out });
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
  if (!webgl2) problems.push("no WebGL2 in this browser");
  if (problems.length > 0) {
    console.error(problems.join("\n"));
    process.exit(1);
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
EOF
    local url="http://127.0.0.1:$port/index.html${WEB_QUERY:-}"
    echo "== $url in headless chromium -> $out"
    node "$tools/screenshot.cjs" "$url" "$out" "${WEB_WAIT_MS:-10000}"
    ls -l "$out"
}

case "${1:-}" in
    build) build ;;
    serve) shift; serve "$@" ;;
    screenshot) shift; screenshot "$@" ;;
    *) usage ;;
esac
