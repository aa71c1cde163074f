#!/usr/bin/env bash
# Two hosts on one machine: two network namespaces joined by a veth pair (10.213.0.1/24 and
# 10.213.0.2/24), `netspec launch --nnodes 2` node 0 in one and node 1 in the other, so the ranks
# can only meet over the veth link. Checks (docs/distributed.md "The namespace check"):
#   1. no rank connection on 127.0.0.0/8 (ss polled in both namespaces during every run; the
#      ranks' own "[dist] ... connections on" lines name the veth addresses);
#   2. 2 nodes x 1 process with batch/2 each == `train --replicas 2` (threads) bit for bit and
#      == 1 process with the full batch within 1e-6 relative (sync-BN; f32 summation order);
#      without sync-BN == `--replicas 2` bit for bit (each shard normalises alone, as in DDP);
#   3. the same over a link with 5 ms delay each way and 1 % loss: `tc netem delay 5ms loss 1%`
#      on the veths where the kernel has sch_netem; elsewhere a third namespace mh<pid>r between
#      the nodes, joined to each by a veth pair (10.214.S.1/24 and 10.214.S.2/24, S from the pid),
#      in which scripts/link-emulator.py forwards every frame (ARP included) 5 ms late or drops it
#      with probability 0.01 (seeded), the direct veth down meanwhile, so the nodes reach each
#      other only through it; asserted: UDP round trip >= 10 ms and the emulator dropped > 0;
#   4. kill -9 of node 1's rank at a random step: node 0 ends within 15 s naming rank 1, no
#      process of the run is left in either namespace, and relaunching both nodes resumes to
#      the uninterrupted run's parameters bit for bit; SIGSTOP of node 1 past the timeout ends
#      node 0, and node 1 ends once continued;
#   5. the LAMB large-batch recipe (examples/lamb-2048-cifar.json, accumulation x replicas) at
#      small scale on the two nodes == `--replicas 2` bit for bit;
#   6. a rank of another netspec build (the binary with one byte appended) is refused at
#      rendezvous naming the build; node 1 reading the secret with --token-file works, and a
#      wrong secret there is refused by rank 0's store; multi-node launch without a token, with a
#      loopback master address or with --iface lo is refused before any rank starts.
# Needs root (ip netns, tc) and python3; exits 77 (skipped) with a message when namespaces
# cannot be made. Everything it creates (namespaces mh<pid>a/b, veths, WORK) goes on exit.
# Usage: scripts/multihost-check.sh [BUILD_DIR] [WORK_DIR]
set -uo pipefail
BUILD=$(realpath "${1:-build}")
ROOT=$(realpath "$(dirname "$0")/..")
NETSPEC=$BUILD/netspec
SKIP=77
skip() { echo "multihost-check: SKIPPED: $*"; exit $SKIP; }
die() { echo "multihost-check: FAILED: $*" >&2; exit 1; }
[ -x "$NETSPEC" ] || die "$NETSPEC not built"
[ "$(id -u)" = 0 ] || skip "needs root to create network namespaces (ip netns)"
command -v ip >/dev/null || skip "no 'ip' (iproute2)"
command -v python3 >/dev/null || skip "no python3 (data generation, checkpoint comparison)"

NA=mh$$a NB=mh$$b NR=mh$$r   # namespaces; the veths are named after them (<= 15 chars)
# The nodes' addresses and interfaces (the emulated link's runs replace them).
ADDR0=10.213.0.1 ADDR1=10.213.0.2 IF0=v$NA IF1=v$NB
WORK=${2:-$(mktemp -d /tmp/multihost.XXXXXX)}
mkdir -p "$WORK"
cleanup() {
  for ns in $NA $NB $NR; do
    for p in $(ip netns pids $ns 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del $ns 2>/dev/null
  done
  for l in v$NA v${NA}e v${NB}e; do  # gone with its namespace unless it never moved there
    ip link del $l 2>/dev/null
  done
  [ -z "${KEEP_WORK:-}" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add $NA 2>/dev/null || skip "cannot create network namespaces here (ip netns add failed)"
ip netns add $NB || skip "cannot create a second network namespace"
ip netns exec $NA true 2>/dev/null || skip "cannot enter a network namespace (ip netns exec failed)"
ip netns exec $NA ss -tnH >/dev/null 2>&1 || skip "no 'ss' (iproute2) usable in a namespace"
ip link add v$NA type veth peer name v$NB || skip "cannot create a veth pair"
ip link set v$NA netns $NA && ip link set v$NB netns $NB || die "moving the veths"
ip -n $NA addr add 10.213.0.1/24 dev v$NA && ip -n $NB addr add 10.213.0.2/24 dev v$NB &&
  ip -n $NA link set v$NA up && ip -n $NB link set v$NB up &&
  ip -n $NA link set lo up && ip -n $NB link set lo up || die "configuring the namespaces"
# lo is up (a rank reaches its own node's address through it) so that a 127.x connection would
# work and be seen: the check below is that none is made.

# Data: fashion-mnist IDX files of 256 + 64 generated images (class c lights tile c).
python3 - "$WORK/data" <<'EOF' || die "generating data"
import gzip, os, random, struct, sys
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
def split(prefix, n, seed):
    r = random.Random(seed); imgs = bytearray(); labs = bytearray()
    for _ in range(n):
        c = r.randrange(10); labs.append(c)
        im = [r.randrange(60) for _ in range(784)]
        ty, tx = divmod(c, 4)
        for y in range(7):
            for x in range(7): im[(ty * 7 + y) * 28 + tx * 7 + x] = 180 + r.randrange(70)
        imgs += bytes(im)
    with gzip.open(f"{d}/{prefix}-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28) + imgs)
    with gzip.open(f"{d}/{prefix}-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + labs)
split("train", 256, 1); split("t10k", 64, 2)
EOF
cat > "$WORK/bnsmall.json" <<'EOF'
{"name": "bnsmall", "inputChannels": 1, "inputHeight": 28, "inputWidth": 28, "layers": [
  {"kind": "convBn", "ic": 1, "oc": 8, "k": 3, "stride": 2},
  {"kind": "convBn", "ic": 8, "oc": 8, "k": 3}, {"kind": "globalAvgPool"},
  {"kind": "flatten"}, {"kind": "dense", "in": 8, "out": 10}]}
EOF
export NETSPEC_DIST_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
export NETSPEC_DIST_TIMEOUT=${NETSPEC_DIST_TIMEOUT:-5}
PORT=29500
# targs RUN_DIR EPOCHS EXTRA...: the training every run of this check does (TARGS_NET and
# TARGS_REST replace the net and its flags).
targs() {
  local run=$1 epochs=$2; shift 2
  local rest="--dataset fashion-mnist --data $WORK/data --batch 32 --optimizer sgd --lr 0.05"
  rest="$rest --set momentum=0.9"
  # (--set epochs=N where the spec's warmupEpochs exceed N until its --set applies: TARGS_EPOCHS)
  echo "train ${TARGS_NET:-$WORK/bnsmall.json} ${TARGS_REST:-$rest} ${TARGS_EPOCHS:---epochs }$epochs" \
    "--run-dir $run $*"
}
one() { "$NETSPEC" $(targs "$@") > "$WORK/$(basename "$1").log" 2>&1 || die "$* (see log)"; }

# Polls the sockets of both namespaces while PIDS run (ss: established TCP, numeric).
watch_sockets() {
  local log=$1; shift
  while kill -0 "$@" 2>/dev/null; do
    ip netns exec $NA ss -tnH state established 2>/dev/null
    ip netns exec $NB ss -tnH state established 2>/dev/null
    sleep 0.05
  done >> "$log"
}

# node N RUN EPOCHS EXTRA...: starts `launch` for node N in its namespace, in the background
# (its pid in LAUNCH_PID); output in WORK/RUN.node<N>.log.
node() {
  local n=$1 run=$2 epochs=$3; shift 3
  local ns=$NA; [ "$n" = 1 ] && ns=$NB
  # Node 1's run dir is its own (no shared file system): only rank 0 writes.
  local dir=$WORK/$run; [ "$n" = 1 ] && dir=$WORK/$run.node1
  # NODE1_TOKEN_FILE: node 1 reads the secret from that file, its environment has none.
  local tok=()
  [ "$n" = 1 ] && [ -n "${NODE1_TOKEN_FILE:-}" ] &&
    tok=(env -u NETSPEC_DIST_TOKEN) && local tf="--token-file $NODE1_TOKEN_FILE"
  ip netns exec $ns "${tok[@]}" "${LAUNCH_BIN:-$NETSPEC}" launch --nnodes 2 --node-rank "$n" \
    --master-addr $ADDR0 --master-port $PORT --nproc-per-node 1 ${tf:-} -- \
    $(targs "$dir" "$epochs" "$@") > "$WORK/$run.node$n.log" 2>&1 &
  LAUNCH_PID=$!
}

# two_nodes RUN EPOCHS EXTRA...: both nodes to the end; fails unless both exit 0 and no
# connection used 127.0.0.0/8 while an inter-node one was seen.
two_nodes() {
  local run=$1
  node 0 "$@"; local p0=$LAUNCH_PID
  node 1 "$@"; local p1=$LAUNCH_PID
  watch_sockets "$WORK/$run.ss" $p0 $p1 &
  local w=$!
  wait $p0; local s0=$?; wait $p1; local s1=$?; wait $w
  [ $s0 = 0 ] && [ $s1 = 0 ] || die "$run: node statuses $s0 $s1: $(tail -3 "$WORK/$run.node0.log" "$WORK/$run.node1.log")"
  check_sockets "$run"
}

check_sockets() {
  local run=$1
  if grep -E '(^|[[:space:]])127\.' "$WORK/$run.ss"; then die "$run: a connection on 127.0.0.0/8 (above)"; fi
  local a0=${ADDR0//./\\.} a1=${ADDR1//./\\.}
  grep -qE "$a0:[0-9]+ +$a1:|$a1:[0-9]+ +$a0:" "$WORK/$run.ss" ||
    die "$run: saw no connection between the two namespaces"
  grep -q "rank 0 of 2: connections on $IF0 $ADDR0" "$WORK/$run.node0.log" ||
    die "$run: rank 0 did not use its veth address: $(cat "$WORK/$run.node0.log")"
  grep -q "rank 1 of 2: connections on $IF1 $ADDR1" "$WORK/$run.node1.log" ||
    die "$run: rank 1 did not use its veth address: $(cat "$WORK/$run.node1.log")"
}

# same A B MODE: checkpoint tensors and per-step losses of run dirs A and B; MODE bits or rel.
same() {
  python3 - "$WORK/$1" "$WORK/$2" "$3" <<'EOF' || die "$1 vs $2 ($3)"
import csv, json, struct, sys
a, b, mode = sys.argv[1:]
def tensors(d):
    raw = open(f"{d}/last.safetensors", "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]; head = json.loads(raw[8:8 + n]); body = raw[8 + n:]
    out = {}
    for k, v in head.items():
        if k == "__metadata__": continue
        s, e = v["data_offsets"]; fmt = {"F32": "f", "F64": "d", "I32": "i", "I64": "q"}[v["dtype"]]
        out[k] = struct.unpack(f"<{(e - s) // struct.calcsize(fmt)}{fmt}", body[s:e])
    return out
def losses(d):  # by step; a resumed run's replayed steps: the last row of each step
    by_step = {int(r["step"]): float(r["train_loss"]) for r in csv.DictReader(open(f"{d}/steps.csv"))}
    return [by_step[k] for k in sorted(by_step)]
ta, tb = tensors(a), tensors(b)
assert ta.keys() == tb.keys(), f"tensor names differ: {sorted(ta)} vs {sorted(tb)}"
pairs = [(k, i, x, y) for k in ta for i, (x, y) in enumerate(zip(ta[k], tb[k]))]
pairs += [("loss", i, x, y) for i, (x, y) in enumerate(zip(losses(a), losses(b)))]
assert len(losses(a)) == len(losses(b)) > 0, "step counts differ"
worst = max(abs(x - y) / (1 + abs(x)) for _, _, x, y in pairs)
bad = [(k, i, x, y) for k, i, x, y in pairs if (x != y if mode == "bits" else abs(x - y) > 1e-6 * (1 + abs(x)))]
print(f"  {a.split('/')[-1]} vs {b.split('/')[-1]}: {len(pairs)} values, max rel diff {worst:.3g} ({mode})")
if bad: sys.exit(f"first differences: {bad[:3]}")
EOF
}

T0=$(date +%s)
echo "multihost-check: namespaces $NA (10.213.0.1) and $NB (10.213.0.2), work dir $WORK"
# References on the host: 1 process x full batch, 2 replica threads x half.
one "$WORK/one" 1 --set syncBN=true
one "$WORK/threads" 1 --set syncBN=true --replicas 2
one "$WORK/threads_nosync" 1 --replicas 2

two_nodes nodes 1 --set syncBN=true
same threads nodes bits; same one nodes rel
echo "$NETSPEC_DIST_TOKEN" > "$WORK/token"
NODE1_TOKEN_FILE=$WORK/token two_nodes nodes_nosync 1  # node 1: --token-file
same threads_nosync nodes_nosync bits
[ -d "$WORK/nodes.node1" ] && die "node 1 (rank 1) wrote a run dir"

# The lossy, slow link: 5 ms each way, 1 % of the frames lost; sync-BN on and off.
lossy_runs() {
  two_nodes netem 1 --set syncBN=true
  same threads netem bits; same one netem rel
  two_nodes netem_nosync 1
  same threads_nosync netem_nosync bits
}
if ip netns exec $NA tc qdisc add dev v$NA root netem delay 5ms loss 1% 2>/dev/null &&
  ip netns exec $NB tc qdisc add dev v$NB root netem delay 5ms loss 1%; then
  echo "multihost-check: lossy link: tc netem on the veth pair"
  lossy_runs
  ip netns exec $NA tc qdisc del dev v$NA root; ip netns exec $NB tc qdisc del dev v$NB root
else
  # No sch_netem (tc netem fails): the link emulator in a third namespace between the nodes.
  S=$(($$ % 250 + 1))
  echo "multihost-check: lossy link: no tc netem here (sch_netem); frames forwarded by" \
    "scripts/link-emulator.py in $NR (10.214.$S.1 <-> 10.214.$S.2)"
  ip netns add $NR || die "creating the emulator's namespace"
  ip link add v${NA}e type veth peer name v${NR}a && ip link add v${NB}e type veth peer name v${NR}b ||
    die "creating the emulated link's veths"
  ip link set v${NA}e netns $NA && ip link set v${NB}e netns $NB && ip link set v${NR}a netns $NR &&
    ip link set v${NR}b netns $NR || die "moving the emulated link's veths"
  ip -n $NA addr add 10.214.$S.1/24 dev v${NA}e && ip -n $NB addr add 10.214.$S.2/24 dev v${NB}e &&
    ip -n $NA link set v${NA}e up && ip -n $NB link set v${NB}e up &&
    ip -n $NR link set v${NR}a up && ip -n $NR link set v${NR}b up || die "configuring the emulated link"
  ip netns exec $NA python3 "$ROOT/scripts/link-emulator.py" offloads-off v${NA}e &&
    ip netns exec $NB python3 "$ROOT/scripts/link-emulator.py" offloads-off v${NB}e ||
    die "turning the offloads off on the emulated link"
  # Only the emulated link from here: the direct veth goes down until the lossy runs end.
  ip -n $NA link set v$NA down && ip -n $NB link set v$NB down || die "taking the direct link down"
  # Seed 5: random.Random(5) drops frames 26, 48 and 66 of the first 100, so the round-trip
  # probe below already meets a drop whatever the training sends.
  ip netns exec $NR python3 "$ROOT/scripts/link-emulator.py" v${NR}a v${NR}b 5 0.01 5 \
    "$WORK/emulator.stats" 2> "$WORK/emulator.log" &
  EMU=$!
  # UDP round trips A -> B -> A, 60 probes: each crosses the emulator twice, so >= 10 ms.
  ip netns exec $NB python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((sys.argv[1], 9)); s.settimeout(20)
try:
    while True:
        d, a = s.recvfrom(64)
        if d == b"end": break
        s.sendto(d, a)
except socket.timeout: pass' 10.214.$S.2 &
  ECHO=$!
  rtt=$(ip netns exec $NA python3 -c '
import socket, statistics, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.5); rtts = []
time.sleep(0.3)  # the echo server binds
for i in range(60):
    t = time.monotonic(); s.sendto(b"%d" % i, (sys.argv[1], 9))
    try:
        while s.recv(64) != b"%d" % i: pass  # a late reply to an earlier probe: skip it
        rtts.append((time.monotonic() - t) * 1000)
    except socket.timeout: pass
s.sendto(b"end", (sys.argv[1], 9))
print(f"{min(rtts):.2f} {statistics.median(rtts):.2f} {len(rtts)}" if rtts else "0 0 0")' 10.214.$S.2)
  kill $ECHO 2>/dev/null; wait $ECHO 2>/dev/null
  read -r rtt_min rtt_med rtt_n <<<"$rtt"
  echo "  emulated link: UDP round trip min $rtt_min ms, median $rtt_med ms ($rtt_n of 60 answered)"
  python3 -c "import sys; sys.exit(0 if float('$rtt_min') >= 10 else 1)" ||
    die "emulated link: round trip $rtt_min ms < 10 ms (the emulator did not delay)"
  ADDR0=10.214.$S.1 ADDR1=10.214.$S.2 IF0=v${NA}e IF1=v${NB}e
  lossy_runs
  ADDR0=10.213.0.1 ADDR1=10.213.0.2 IF0=v$NA IF1=v$NB
  kill -TERM $EMU; wait $EMU
  read -r _ fwd _ dropped _ send_err < "$WORK/emulator.stats"
  echo "  emulator: forwarded $fwd frames, dropped $dropped, send errors $send_err"
  [ "$dropped" -gt 0 ] || die "emulated link: the emulator dropped no frame"
  [ "$send_err" = 0 ] || die "emulated link: $send_err frames not sent: $(cat "$WORK/emulator.log")"
  ip -n $NA link set v$NA up && ip -n $NB link set v$NB up || die "bringing the direct link up"
  ip netns del $NR
fi

# Large batches across nodes: the recipe examples/lamb-2048-cifar.json (LAMB, batch 1024 x 2
# micro-batches; mixup, cutmix, RandAugment, repeated augmentation) at small scale, 2 x 16 rows a
# micro-batch, 2 micro-batches an update (ghost BN per shard, momentum compensated): 2 nodes ==
# --replicas 2 bit for bit. Data: CIFAR-10 binary batches of generated images.
python3 - "$WORK/cifar" <<'EOF' || die "generating CIFAR data"
import os, random, sys
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
def batch(name, n, seed):
    r = random.Random(seed); out = bytearray()
    for _ in range(n):
        c = r.randrange(10); out.append(c)
        out += bytes((c * 25 + r.randrange(60)) % 256 for _ in range(3072))
    open(f"{d}/{name}", "wb").write(out)
for k in range(1, 6): batch(f"data_batch_{k}.bin", 32, k)
batch("test_batch.bin", 32, 9)
EOF
lb="--data $WORK/cifar --set batchSize=32 --set warmupEpochs=0"
"$NETSPEC" train "$ROOT/examples/lamb-2048-cifar.json" $lb --set epochs=1 --replicas 2 \
  --run-dir "$WORK/lamb_threads" > "$WORK/lamb_threads.log" 2>&1 ||
  die "lamb threads: $(tail -3 "$WORK/lamb_threads.log")"
TARGS_NET="$ROOT/examples/lamb-2048-cifar.json" TARGS_REST="$lb" TARGS_EPOCHS="--set epochs=" \
  two_nodes lamb 1
same lamb_threads lamb bits

# Faults. kill -9 of node 1's rank at a random moment of epoch 2 or 3 of 30 (once epoch 1's
# `last` checkpoint exists): node 0 must end within 15 s naming rank 1.
node 0 kill 30 --set syncBN=true; p0=$LAUNCH_PID
node 1 kill 30 --set syncBN=true; p1=$LAUNCH_PID
i=0; while [ ! -f "$WORK/kill/last.safetensors" ] && kill -0 $p0 2>/dev/null && [ $i -lt 3000 ]; do
  sleep 0.01; i=$((i + 1)); done
sleep "0.$((RANDOM % 10))"
rank1=$(pgrep -P $p1 | head -1)
[ -n "$rank1" ] || die "kill: node 1 has no rank process: $(cat "$WORK/kill.node1.log")"
kill -9 "$rank1"; t=$(date +%s)
wait $p0; s0=$?; t0=$(($(date +%s) - t))
wait $p1; s1=$?
echo "  kill -9 of rank 1: node 0 exited $s0 after ${t0}s, node 1 exited $s1"
[ $s0 != 0 ] && [ $s1 != 0 ] || die "kill: statuses $s0 $s1"
[ $t0 -le 15 ] || die "kill: node 0 took ${t0}s"
grep -q "lost rank 1 on 10.213.0.2" "$WORK/kill.node0.log" ||
  die "kill: node 0 did not name rank 1: $(tail -3 "$WORK/kill.node0.log")"
mv "$WORK/kill.node0.log" "$WORK/kill-first.node0.log"
left=$(ip netns pids $NA; ip netns pids $NB)
[ -z "$left" ] || die "kill: processes left in the namespaces: $left"
# Relaunch both nodes for one epoch more than the checkpoint holds (metrics.csv: a row an epoch):
# resumes from it to what an uninterrupted run of that many epochs gives, bit for bit.
epochs=$(wc -l < "$WORK/kill/metrics.csv")  # the header + a row per epoch done: done + 1
one "$WORK/threads_e" $epochs --set syncBN=true --replicas 2
two_nodes kill $epochs --set syncBN=true --resume
grep -q resuming "$WORK/kill.node0.log" || die "kill: the relaunch did not resume"
same threads_e kill bits

# SIGSTOP of node 1 (launch and rank): node 0 ends after the timeout; node 1, continued, ends.
node 0 stop 30 --set syncBN=true; p0=$LAUNCH_PID
node 1 stop 30 --set syncBN=true; p1=$LAUNCH_PID
i=0; while [ ! -f "$WORK/stop/last.safetensors" ] && kill -0 $p0 2>/dev/null && [ $i -lt 600 ]; do
  sleep 0.05; i=$((i + 1)); done
stopped=$(ip netns pids $NB)
kill -STOP $stopped; t=$(date +%s)
wait $p0; s0=$?; t0=$(($(date +%s) - t))
kill -CONT $stopped; t=$(date +%s)
wait $p1; s1=$?; t1=$(($(date +%s) - t))
echo "  SIGSTOP of node 1: node 0 exited $s0 after ${t0}s; node 1, continued, exited $s1 after ${t1}s"
[ $s0 != 0 ] && [ $s1 != 0 ] || die "stop: statuses $s0 $s1"
[ $t0 -le $((NETSPEC_DIST_TIMEOUT + 10)) ] || die "stop: node 0 took ${t0}s"
grep -q "lost rank 1 on 10.213.0.2" "$WORK/stop.node0.log" ||
  die "stop: node 0 did not name rank 1: $(tail -3 "$WORK/stop.node0.log")"
[ $t1 -le $((NETSPEC_DIST_TIMEOUT + 15)) ] || die "stop: node 1 took ${t1}s after SIGCONT"
left=$(ip netns pids $NA; ip netns pids $NB)
[ -z "$left" ] || die "stop: processes left in the namespaces: $left"

# Refusals. Another build: the same binary with one byte appended (still runs).
cp "$NETSPEC" "$WORK/netspec-other" && printf x >> "$WORK/netspec-other"
node 0 build 1; p0=$LAUNCH_PID
LAUNCH_BIN=$WORK/netspec-other node 1 build 1; p1=$LAUNCH_PID
wait $p0; s0=$?; wait $p1; s1=$?
[ $s0 = 2 ] && [ $s1 = 2 ] || die "build: statuses $s0 $s1 (expected 2 2)"
grep -q "rank 1 runs another netspec build than rank 0 (build.binary" "$WORK/build.node0.log" ||
  die "build: $(tail -3 "$WORK/build.node0.log")"
# Node 1 with another secret in its --token-file: refused by rank 0's store, naming the token.
echo wrong-secret > "$WORK/bad.token"
node 0 badtoken 1; p0=$LAUNCH_PID
NODE1_TOKEN_FILE=$WORK/bad.token node 1 badtoken 1; p1=$LAUNCH_PID
wait $p0; s0=$?; wait $p1; s1=$?
[ $s0 != 0 ] && [ $s1 != 0 ] || die "bad token: statuses $s0 $s1"
grep -q "refused this rank's token" "$WORK/badtoken.node1.log" ||
  die "bad token: $(tail -3 "$WORK/badtoken.node1.log")"
out=$(NETSPEC_DIST_TOKEN= ip netns exec $NB "$NETSPEC" launch --nnodes 2 --node-rank 1 \
  --master-addr 10.213.0.1 --nproc-per-node 1 -- train x 2>&1); s=$?
[ $s = 2 ] && grep -q "needs the run's shared secret" <<<"$out" || die "no token: $s $out"
out=$(ip netns exec $NA "$NETSPEC" launch --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 \
  --nproc-per-node 1 -- train x 2>&1); s=$?
[ $s = 2 ] && grep -q "is a loopback address" <<<"$out" || die "loopback master: $s $out"
out=$(ip netns exec $NA "$NETSPEC" launch --nnodes 2 --node-rank 0 --master-addr 10.213.0.1 \
  --iface lo --nproc-per-node 1 -- train x 2>&1); s=$?
[ $s = 2 ] && grep -q "loopback address the other nodes cannot reach" <<<"$out" ||
  die "--iface lo: $s $out"
echo "multihost-check: passed in $(($(date +%s) - T0)) s"
