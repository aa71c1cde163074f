#!/usr/bin/env python3
"""A lossy, slow link between two interfaces, for kernels without sch_netem (tc netem).

Run inside a network namespace that holds two veth ends, IFACE_A and IFACE_B, with no address
and no kernel forwarding: every Ethernet frame that arrives on one (AF_PACKET raw socket) is
sent out of the other DELAY_MS later, or dropped with probability LOSS (random.Random(SEED), one
draw per frame in arrival order). The nodes on the far ends of the two veths share one subnet
and reach each other only through this process (ARP included). Frames this process sent itself
(PACKET_OUTGOING) are not read back.

`link-emulator.py offloads-off IFACE` (run in each node's namespace on its end of the link first)
turns off the sender-side offloads there: transmit checksums (a frame read raw would carry a
checksum the kernel never filled in) and segmentation (TSO/GSO would hand over 64 KiB
super-frames that cannot be sent back out through a 1500-byte MTU), so every frame on the wire
is a real one.

SIGTERM/SIGINT: writes "forwarded N dropped M" to STATS (also rewritten every second) and exits.
Usage: link-emulator.py IFACE_A IFACE_B DELAY_MS LOSS SEED STATS | offloads-off IFACE
"""
import collections
import ctypes
import fcntl
import os
import random
import select
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SIOCETHTOOL = 0x8946
# ethtool set-commands (struct ethtool_value {u32 cmd; u32 data;}) and their get-commands:
# transmit checksum, scatter-gather, TSO, GSO, GRO.
ETHTOOL_OFF = {"tx-checksum": (0x17, 0x16), "sg": (0x19, 0x18), "tso": (0x1F, 0x1E),
               "gso": (0x24, 0x23), "gro": (0x2C, 0x2B)}


def ethtool(sock, iface, cmd, data=0):
    val = ctypes.create_string_buffer(struct.pack("II", cmd, data))
    ifr = struct.pack("16sP", iface.encode(), ctypes.addressof(val))
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifr)
    return struct.unpack("II", val.raw[:8])[1]


def offloads_off(iface):
    """Turns the offloads off and checks that they read back off (exits 1 otherwise)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for name, (set_cmd, get_cmd) in ETHTOOL_OFF.items():
        try:
            ethtool(s, iface, set_cmd, 0)
            on = ethtool(s, iface, get_cmd)
        except OSError as e:
            sys.exit(f"link-emulator: {iface}: turning {name} off: {e}")
        if on:
            sys.exit(f"link-emulator: {iface}: {name} is still on")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "offloads-off":
        return offloads_off(sys.argv[2])
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    ia, ib, delay_ms, loss, seed, stats = sys.argv[1:]
    delay, loss, rng = float(delay_ms) / 1000.0, float(loss), random.Random(int(seed))
    socks = {}
    for iface in (ia, ib):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((iface, 0))
        s.setblocking(False)
        socks[iface] = s
    other = {socks[ia].fileno(): socks[ib], socks[ib].fileno(): socks[ia]}
    queue = collections.deque()  # (due time, frame, out socket): FIFO, the delay is constant
    counts = {"forwarded": 0, "dropped": 0, "send_errors": 0}

    def write_stats():
        line = " ".join(f"{k} {v}" for k, v in counts.items())
        with open(stats + ".tmp", "w") as f:
            f.write(line + "\n")
        os.replace(stats + ".tmp", stats)

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    poller = select.poll()
    for s in socks.values():
        poller.register(s.fileno(), select.POLLIN)
    last_stats = 0.0
    while not stop:
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, frame, out = queue.popleft()
            try:
                out.send(frame)
                counts["forwarded"] += 1
            except OSError:
                counts["send_errors"] += 1
        timeout = max(0.0, queue[0][0] - now) if queue else 0.2
        try:
            ready = poller.poll(timeout * 1000.0)
        except InterruptedError:
            continue
        now = time.monotonic()
        for fd, _ in ready:
            s = socks[ia] if fd == socks[ia].fileno() else socks[ib]
            while True:
                try:
                    frame, addr = s.recvfrom(65536)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:  # our own send on this interface
                    continue
                if rng.random() < loss:
                    counts["dropped"] += 1
                    continue
                queue.append((now + delay, frame, other[fd]))
        if now - last_stats >= 1.0:
            write_stats()
            last_stats = now
    write_stats()


if __name__ == "__main__":
    main()
