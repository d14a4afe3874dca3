# One TCP flow with a deterministic drop list, for tcpsim's packet-for-packet cross-check
# (simulator/validation/ns2_crosscheck.py; docs/validation/ns2-crosscheck.md).
#
#   S --access--> L ==bottleneck==> R --access--> D
#
# usage: ns det.tcl key=value ...     -> one JSON line on stdout at the end of the run
#
# Every variant ns-2.35 shares with tcpsim: tahoe (Agent/TCP), reno, newreno-sbs
# (newreno_changes1_ 0), newreno-impatient (newreno_changes1_ 1, ns-2.35's default), sack
# (Sack1), fack (Fack), vegas (Vegas). The flow starts at t = 0 with no SYN round trip (tcpsim
# has no handshake); packets named in `drops` (1-based arrival number of the flow's data
# packets at its first link, tcpsim's `scheduled` loss module) are dropped there.
# `trace` > 0 prints "T time cwnd ssthresh ack nrexmit ndatapack" to stderr every so many seconds.

array set opt {
    variant newreno-sbs
    bw 45
    rtt 70
    bdelay 5
    queue 1000
    window 30
    dur 10
    drops {}
    singledup 1
    pkt 1000
    init 2
    trace 0
}
source [file join [file dirname [info script]] common.tcl]
parse_key_values opt $argv

set ns [new Simulator]   ;# first: a TCP agent created before the simulator segfaults

# ns-2.35 defaults, written out where tcpsim's ns2 profile must match them
ns2_tcp_defaults $opt(pkt) $opt(window) $opt(init) $opt(singledup) false

set L [$ns node]
set R [$ns node]
set S [$ns node]
set D [$ns node]
set accdelay [expr {($opt(rtt) / 2.0 - $opt(bdelay)) / 2.0}]
$ns duplex-link $L $R $opt(bw)Mb $opt(bdelay)ms DropTail
$ns duplex-link $S $L 1000Mb ${accdelay}ms DropTail
$ns duplex-link $R $D 1000Mb ${accdelay}ms DropTail
foreach {a b} [list $L $R $R $L] { $ns queue-limit $a $b $opt(queue) }
foreach {a b} [list $S $L $L $S $R $D $D $R] { $ns queue-limit $a $b 1000 }

set sink Agent/TCPSink
switch -- $opt(variant) {
    tahoe             { set tcp [new Agent/TCP] }
    reno              { set tcp [new Agent/TCP/Reno] }
    newreno-sbs       { set tcp [new Agent/TCP/Newreno]; $tcp set newreno_changes1_ 0 }
    newreno-impatient { set tcp [new Agent/TCP/Newreno]; $tcp set newreno_changes1_ 1 }
    sack              { set tcp [new Agent/TCP/Sack1]; set sink Agent/TCPSink/Sack1 }
    fack              { set tcp [new Agent/TCP/Fack];  set sink Agent/TCPSink/Sack1 }
    vegas             { set tcp [new Agent/TCP/Vegas] }
    default           { puts stderr "unknown variant $opt(variant)"; exit 2 }
}
set snk [new $sink]
$ns attach-agent $S $tcp
$ns attach-agent $D $snk
$ns connect $tcp $snk
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at 0 "$ftp start"

set lost [new Agent/LossMonitor]
$ns attach-agent $S $lost
if {$opt(drops) != {}} {
    set lem [new ErrorModel/List]
    set dl {}
    foreach x [split $opt(drops) ,] { lappend dl [expr {$x - 1}] }   ;# ErrorModel/List counts from 0
    $lem droplist $dl
    $ns lossmodel $lem $S $L
    $lem drop-target $lost
}

if {$opt(trace) > 0} {
    proc trace_cwnd {} {
        global ns tcp opt
        puts stderr [format "T %.3f %.2f %d %d %d %d" [$ns now] [$tcp set cwnd_] [$tcp set ssthresh_] \
            [$tcp set ack_] [$tcp set nrexmit_] [$tcp set ndatapack_]]
        $ns at [expr {[$ns now] + $opt(trace)}] trace_cwnd
    }
    $ns at 0 trace_cwnd
}

# Retransmit-timer expiries. nrexmit_ counts them (TcpAgent::timeout, tcp.cc; Vegas's own
# timeout() too) except for FACK: FackTcpAgent::timeout (tcp-fack.cc) never increments it.
# For FACK they are counted as the doublings of backoff_ (reset_rtx_timer(.., 1) ->
# rtt_backoff(), up to 64: six expiries in a row, more than a 10 s run holds); only an RTT
# sample resets it, a round trip (here >= 70 ms) after an expiry, so a 10 ms sample sees every
# doubling. (Not for every agent: Vegas's fast retransmit backs the timer off as well.)
set backoff_doublings 0
set backoff 1
proc count_backoff_doublings {} {
    global ns tcp backoff_doublings backoff
    set b [$tcp set backoff_]
    if {$b > $backoff} { incr backoff_doublings }
    set backoff $b
    $ns at [expr {[$ns now] + 0.01}] count_backoff_doublings
}
if {$opt(variant) == "fack"} { $ns at 0 count_backoff_doublings }

proc finish {} {
    global tcp lost opt backoff_doublings
    set timeouts [expr {$opt(variant) == "fack" ? $backoff_doublings : [$tcp set nrexmit_]}]
    puts [format {{"sim": "ns-2.35", "variant": "%s", "acked_pkts": %d, "data_pkts_sent": %d, "retransmits": %d, "timeouts": %d, "nrexmit": %d, "drops": %d, "final_cwnd": %.2f}} \
        $opt(variant) [$tcp set ack_] [$tcp set ndatapack_] [$tcp set nrexmitpack_] $timeouts [$tcp set nrexmit_] \
        [$lost set npkts_] [$tcp set cwnd_]]
    flush stdout
    exit 0
}
$ns at $opt(dur) finish
$ns run
