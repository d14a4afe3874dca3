# ns-2.35 version of tcpsim's paper-003 presets (services/presets/paper003.py): Lai & Yao, "TCP
# congestion control algorithms and a performance comparison", §4 (Fig. 5, Tables 2-4).
#
#   S_i --access--> A ==bottleneck==> B --access--> D_i
#
# Bottleneck A-B: `bw` (1.5 Mb/s), `bdelay` (1 ms), Drop-Tail `queue` (10) packets both ways;
# `err` > 0 loses each packet entering A->B with that probability (ErrorModel, uniform, packet
# units; only data packets cross A->B). Each connection has its own 10 Mb/s access links with
# one-way delay d_i on both sides (Drop-Tail 100), so its round-trip propagation is
# 2 (2 d_i + bdelay), as tcpsim's `rtt_ms`. TCP: packetSize_ 512 (+ 40 header), window_ 64,
# ssthresh_ from window_ (ns-2's TcpAgent::reset()), windowInit_ 2, minrto_ 0.2, tcpTick_ 0.01,
# one ACK per packet.
#
# usage: ns paper003.tcl key=value ...      prints exactly one JSON line on stdout
#
# keys (default):
#   groups (tcp/reno/2/20/u)   comma list of name/variant/count/access_ms/start; start is a number
#                              (seconds) or u = Uniform[0, 0.5) per connection (tcpsim's preset)
#                              variants: tahoe reno newreno-sbs newreno-impatient sack fack
#                              fack-rampdown rate-halving (Agent/TCP/SackRH) vegas
#   err (0) bw (1.5) bdelay (1) queue (10) accqueue (100) pkt (512) window (64)
#   dur (50) warm (0: goodput over [warm, dur]) seed (1): $defaultRNG (errors) and the start RNG
#   vegashdr (0)               1: Vegas packetSize_ = pkt + 40 (its output() adds no header, see
#                              paper002.tcl); goodput counts pkt bytes per packet
#   syn (1) singledup (1)      ns-2.35 defaults. tcpsim has no SYN; limited transmit is off in its RFC
#                              defaults (singledup 0), on in its ns2 profile

set T_START [clock microseconds]
array set P {
    groups tcp/reno/2/20/u err 0 bw 1.5 bdelay 1 queue 10 accqueue 100 pkt 512 window 64
    dur 50 warm 0 seed 1 syn 1 singledup 1 vegashdr 0
}
source [file join [file dirname [info script]] common.tcl]
parse_key_values P $argv
global defaultRNG
$defaultRNG seed $P(seed)
set startrng [new RNG]
$startrng seed [expr {$P(seed) * 7919 + 17}]
set ns [new Simulator]

ns2_tcp_defaults $P(pkt) $P(window) 2 $P(singledup) $P(syn)   ;# ssthresh_ 0: reset() takes window_

set A [$ns node]
set B [$ns node]
$ns duplex-link $A $B $P(bw)Mb $P(bdelay)ms DropTail
$ns queue-limit $A $B $P(queue)
$ns queue-limit $B $A $P(queue)
set qmon [$ns monitor-queue $A $B [open /dev/null w] 1000.0]
if {$P(err) > 0} {
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ $P(err)
    $em ranvar [new RandomVariable/Uniform]
    set elm [new Agent/LossMonitor]
    $ns attach-agent $B $elm
    $ns lossmodel $em $A $B
    $em drop-target $elm
}

proc tcp_agent {v} {
    global P
    switch -- $v {
        tahoe { return [list [new Agent/TCP] [new Agent/TCPSink]] }
        reno { return [list [new Agent/TCP/Reno] [new Agent/TCPSink]] }
        newreno-sbs { set t [new Agent/TCP/Newreno]; $t set newreno_changes1_ 0; return [list $t [new Agent/TCPSink]] }
        newreno-impatient { set t [new Agent/TCP/Newreno]; $t set newreno_changes1_ 1; return [list $t [new Agent/TCPSink]] }
        vegas { set t [new Agent/TCP/Vegas]; if {$P(vegashdr)} { $t set packetSize_ [expr {$P(pkt) + 40}] }; return [list $t [new Agent/TCPSink]] }
        sack { return [list [new Agent/TCP/Sack1] [new Agent/TCPSink/Sack1]] }
        fack { return [list [new Agent/TCP/Fack] [new Agent/TCPSink/Sack1]] }
        fack-rampdown { set t [new Agent/TCP/Fack]; $t set rampdown_ 1; return [list $t [new Agent/TCPSink/Sack1]] }
        rate-halving { return [list [new Agent/TCP/SackRH] [new Agent/TCPSink/Sack1]] }
        default { puts stderr "unknown variant $v"; exit 2 }
    }
}

set conns {}
set c 0
foreach g [split $P(groups) ,] {
    lassign [split $g /] gname v count acc st
    for {set j 0} {$j < $count} {incr j} {
        set S($c) [$ns node]
        set D($c) [$ns node]
        $ns duplex-link $S($c) $A 10Mb ${acc}ms DropTail
        $ns duplex-link $B $D($c) 10Mb ${acc}ms DropTail
        foreach {x y} [list $S($c) $A $A $S($c) $B $D($c) $D($c) $B] { $ns queue-limit $x $y $P(accqueue) }
        lassign [tcp_agent $v] tcp($c) snk($c)
        $tcp($c) set fid_ $c
        $ns attach-agent $S($c) $tcp($c)
        $ns attach-agent $D($c) $snk($c)
        $ns connect $tcp($c) $snk($c)
        set ftp($c) [new Application/FTP]
        $ftp($c) attach-agent $tcp($c)
        set start($c) [expr {$st == "u" ? [$startrng uniform 0 0.5] : $st}]
        $ns at $start($c) "$ftp($c) start"
        lappend conns [list $c $gname $v]
        incr c
    }
}

proc snap {} {
    global conns tcp qmon elm
    set r {}
    foreach cn $conns {
        set i [lindex $cn 0]
        lappend r [list [$tcp($i) set ack_] [$tcp($i) set ndatapack_] [$tcp($i) set nrexmitpack_] [$tcp($i) set nrexmit_] [$tcp($i) set ncwndcuts_]]
    }
    set e 0
    if {[info exists elm]} { set e [$elm set npkts_] }
    return [list $r [$qmon set pdrops_] [$qmon set parrivals_] $e]
}
set W {}
if {$P(warm) > 0} { $ns at $P(warm) {set W [snap]} }

proc finish {} {
    global ns P W T_START T_RUN conns start
    set T_END [clock microseconds]
    set E [snap]
    set t0 [expr {$P(warm) > 0 ? $P(warm) : 0}]
    set win [expr {$P(dur) - $t0}]
    set out {}
    set k 0
    foreach cn $conns {
        set e [lindex [lindex $E 0] $k]
        set s [expr {$W == {} ? {0 0 0 0 0} : [lindex [lindex $W 0] $k]}]
        for {set j 0} {$j < 5} {incr j} { set d($j) [expr {[lindex $e $j] - [lindex $s $j]}] }
        lappend out [format {{"conn": %d, "group": "%s", "variant": "%s", "start_s": %.4f, "goodput_bps": %.1f, "acked_pkts": %d, "data_pkts_sent": %d, "retransmits": %d, "timeouts": %d, "cwnd_cuts": %d}} \
            [lindex $cn 0] [lindex $cn 1] [lindex $cn 2] $start([lindex $cn 0]) [expr {$d(0) * $P(pkt) * 8.0 / $win}] $d(0) $d(1) $d(2) $d(3) $d(4)]
        incr k
    }
    set ws [expr {$W == {} ? {{} 0 0 0} : $W}]
    set args {}
    foreach a [lsort [array names P]] { lappend args [format {"%s": "%s"} $a $P($a)] }
    puts [format {{"sim": "ns-2.35", "script": "paper003.tcl", "args": {%s}, "setup_wall_s": %.4f, "run_wall_s": %.4f, "from_s": %s, "to_s": %s, "bneck_queue_drops": %d, "bneck_arrivals": %d, "error_drops": %d, "conns": [%s]}} \
        [join $args ", "] [expr {($T_RUN - $T_START) / 1e6}] [expr {($T_END - $T_RUN) / 1e6}] $t0 $P(dur) \
        [expr {[lindex $E 1] - [lindex $ws 1]}] [expr {[lindex $E 2] - [lindex $ws 2]}] [expr {[lindex $E 3] - [lindex $ws 3]}] [join $out ", "]]
    flush stdout
    exit 0
}
$ns at $P(dur) finish
set T_RUN [clock microseconds]
$ns run
