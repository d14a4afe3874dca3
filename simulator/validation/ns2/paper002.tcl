# ns-2.35 version of tcpsim's paper-002 presets (services/presets/paper002.py): Hushyar & Upreti,
# "Performance Analysis of TCP Variants", experiments 1-3 on the six-node topology.
#
#   N1 --\                 /-- N4        TCP "first"  N1 -> N4
#         N2 ==== N3 ====                TCP "second" N5 -> N6 (experiment 2 only)
#   N5 --/                 \-- N6        CBR/UDP      N2 -> N3
#
# Every link 10 Mb/s, 1 ms, Drop-Tail 50 (ns-2's default, as the preset); N2-N3 takes `qtype`
# (droptail | red) and `qlimit`. TCP: window_ 20 (ns-2's default, as the preset), 1000-byte
# segments + 40 header bytes, one ACK per segment, windowInit_ 2, minrto_ 0.2, tcpTick_ 0.01.
#
# usage: ns paper002.tcl key=value ...      prints exactly one JSON line on stdout
#
# keys (default):
#   v1 (reno)         variant of the first TCP flow: tahoe reno newreno-sbs newreno-impatient
#                     vegas sack fack
#   v2 (none)         variant of the second TCP flow (N5 -> N6), none = experiment 1/3
#   start2 (0)        start of the second flow
#   cbr (7)           CBR rate, Mb/s (0 = no CBR); cbrsize (3000) bytes on the wire
#                     (Agent/UDP packetSize_ is set to it, so nothing is fragmented; UDP adds no header)
#   udpsize (0)       Agent/UDP packetSize_; 0 = cbrsize. ns-2.35's default is 1000: a CBR packet larger
#                     than it leaves the agent as floor(cbrsize / udpsize) back-to-back packets of udpsize
#                     (and one of the remainder), UdpAgent::sendmsg
#   cbrstart (0)      CBR start (experiment 3: 4)
#   qtype (droptail)  N2-N3 queue: droptail | red (ns-2.35's automatic RED parameters)
#   qlimit (50)       N2-N3 buffer, packets
#   redbytes (1)      RED queue_in_bytes_ / bytes_: 1 = ns-2.35's default (byte mode: the average
#                     and the limit count bytes / mean_pktsize_ 500); 0 = packet mode (as tcpsim)
#   window (20) dur (10) warm (0: a second window [warm, dur] is reported beside [0, warm])
#   seed (1)          $defaultRNG seed (RED's drop decisions)
#   syn (1) singledup (1)    ns-2.35 defaults. tcpsim has no SYN; its RFC defaults have limited
#                     transmit off (singledup 0), its ns2 profile on
#   delay (1) pkt (1000)     every link's delay (ms); TCP packetSize_ (payload bytes)
#   vegashdr (0)      1: Vegas packetSize_ = pkt + 40. ns-2.35's VegasTcpAgent::output() never adds
#                     headersize() (TcpAgent::output() does), so its packets are 40 bytes shorter on
#                     the wire than every other agent's; goodput still counts pkt bytes per packet
#   redwait (1)       RED wait_ (ns-2.35 default true: spaces early drops, red.cc); tcpsim has no such rule
#   qsample (0.001)   N2-N3 queue sampling interval for the mean queue (packets and bytes), sampled
#                     over [warm, dur] (the whole run when warm = 0), as tcpsim's link statistics

set T_START [clock microseconds]
array set P {
    v1 reno v2 none start2 0 cbr 7 cbrsize 3000 udpsize 0 cbrstart 0 qtype droptail qlimit 50 redbytes 1
    window 20 dur 10 warm 0 seed 1 syn 1 singledup 1 qsample 0.001 redwait 1 delay 1 pkt 1000 vegashdr 0
}
source [file join [file dirname [info script]] common.tcl]
parse_key_values P $argv
global defaultRNG
$defaultRNG seed $P(seed)
set ns [new Simulator]

ns2_tcp_defaults $P(pkt) $P(window) 2 $P(singledup) $P(syn)
Queue/RED set queue_in_bytes_ $P(redbytes)
Queue/RED set bytes_ $P(redbytes)
Queue/RED set wait_ $P(redwait)

foreach n {1 2 3 4 5 6} { set N($n) [$ns node] }
proc link {a b q} {
    global ns N P
    $ns duplex-link $N($a) $N($b) 10Mb $P(delay)ms $q
}
link 1 2 DropTail
link 5 2 DropTail
link 3 4 DropTail
link 3 6 DropTail
if {$P(qtype) == "red"} { link 2 3 RED } elseif {$P(qtype) == "droptail"} { link 2 3 DropTail } else {
    puts stderr "qtype must be droptail or red"; exit 2
}
$ns queue-limit $N(2) $N(3) $P(qlimit)
$ns queue-limit $N(3) $N(2) $P(qlimit)

# per-flow arrivals, departures and drops at N2 -> N3 (fid 1, 2: TCP; 3: CBR)
set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $N(2) $N(3)] $fmon

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
        default { puts stderr "unknown variant $v"; exit 2 }
    }
}
set flows {}
proc add_tcp {id v src dst start} {
    global ns N tcp snk flows
    lassign [tcp_agent $v] tcp($id) snk($id)
    $tcp($id) set fid_ $id
    $ns attach-agent $N($src) $tcp($id)
    $ns attach-agent $N($dst) $snk($id)
    $ns connect $tcp($id) $snk($id)
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp($id)
    $ns at $start "$ftp start"
    lappend flows [list $id $v]
}
add_tcp 1 $P(v1) 1 4 0.0
if {$P(v2) != "none"} { add_tcp 2 $P(v2) 5 6 $P(start2) }
if {$P(cbr) > 0} {
    set udp [new Agent/UDP]
    $udp set packetSize_ [expr {$P(udpsize) > 0 ? $P(udpsize) : $P(cbrsize)}]
    $udp set fid_ 3
    set cbrsink [new Agent/LossMonitor]
    $ns attach-agent $N(2) $udp
    $ns attach-agent $N(3) $cbrsink
    $ns connect $udp $cbrsink
    set cbr [new Application/Traffic/CBR]
    $cbr set packetSize_ $P(cbrsize)
    $cbr set rate_ [expr {$P(cbr) * 1e6}]
    $cbr set random_ 0
    $cbr attach-agent $udp
    $ns at $P(cbrstart) "$cbr start"
}

# mean N2->N3 queue, sampled
set qs_n 0; set qs_p 0.0; set qs_b 0.0
proc qsample {} {
    global ns fmon P qs_n qs_p qs_b
    incr qs_n
    set qs_p [expr {$qs_p + [$fmon set pkts_]}]
    set qs_b [expr {$qs_b + [$fmon set size_]}]
    $ns at [expr {[$ns now] + $P(qsample)}] qsample
}
$ns at $P(warm) qsample

proc fstat {fid} {
    # {arrivals departures drops early-drops} of fid at N2->N3 so far
    global fmon
    set f [[$fmon classifier] lookup auto 0 0 $fid]
    if {$f == ""} { return {0 0 0 0} }
    return [list [$f set parrivals_] [$f set pdepartures_] [$f set pdrops_] [expr {[catch {$f set edrops_} e] ? 0 : $e}]]
}
proc snap {} {
    global flows tcp cbrsink
    set r {}
    foreach fl $flows {
        set id [lindex $fl 0]
        lappend r [list [$tcp($id) set ack_] [$tcp($id) set ndatapack_] [$tcp($id) set nrexmitpack_] [$tcp($id) set nrexmit_] {*}[fstat $id]]
    }
    set c {0 0 0}
    if {[info exists cbrsink]} { set c [list [$cbrsink set bytes_] [$cbrsink set npkts_] [$cbrsink set nlost_]] }
    return [list $r $c [fstat 3]]
}
set W {}
if {$P(warm) > 0} { $ns at $P(warm) {set W [snap]} }

proc window_json {a b t0 t1} {
    # per-flow figures between two snapshots (a may be {} = time 0)
    global flows P
    set out {}
    set k 0
    foreach fl $flows {
        set e [lindex [lindex $b 0] $k]
        set s [expr {$a == {} ? {0 0 0 0 0 0 0 0} : [lindex [lindex $a 0] $k]}]
        for {set j 0} {$j < 8} {incr j} { set d($j) [expr {[lindex $e $j] - [lindex $s $j]}] }
        lappend out [format {{"flow": %d, "variant": "%s", "goodput_bps": %.1f, "acked_pkts": %d, "data_pkts_sent": %d, "retransmits": %d, "timeouts": %d, "bneck_arrivals": %d, "bneck_drops": %d, "bneck_early_drops": %d}} \
            [lindex $fl 0] [lindex $fl 1] [expr {$d(0) * $P(pkt) * 8.0 / ($t1 - $t0)}] $d(0) $d(1) $d(2) $d(3) $d(4) $d(6) $d(7)]
        incr k
    }
    set ce [lindex $b 1]; set cs [expr {$a == {} ? {0 0 0} : [lindex $a 1]}]
    set fe [lindex $b 2]; set fs [expr {$a == {} ? {0 0 0 0} : [lindex $a 2]}]
    set cbrj [format {{"goodput_bps": %.1f, "received_pkts": %d, "bneck_drops": %d, "bneck_early_drops": %d}} \
        [expr {([lindex $ce 0] - [lindex $cs 0]) * 8.0 / ($t1 - $t0)}] [expr {[lindex $ce 1] - [lindex $cs 1]}] \
        [expr {[lindex $fe 2] - [lindex $fs 2]}] [expr {[lindex $fe 3] - [lindex $fs 3]}]]
    return [format {{"from_s": %s, "to_s": %s, "tcp": [%s], "cbr": %s}} $t0 $t1 [join $out ", "] $cbrj]
}

proc finish {} {
    global ns P W T_START T_RUN qs_n qs_p qs_b fmon
    set T_END [clock microseconds]
    set E [snap]
    set wins [list [window_json {} [expr {$W == {} ? $E : $W}] 0 [expr {$P(warm) > 0 ? $P(warm) : $P(dur)}]]]
    if {$W != {}} { lappend wins [window_json $W $E $P(warm) $P(dur)] }
    set args {}
    foreach k [lsort [array names P]] { lappend args [format {"%s": "%s"} $k $P($k)] }
    puts [format {{"sim": "ns-2.35", "script": "paper002.tcl", "args": {%s}, "setup_wall_s": %.4f, "run_wall_s": %.4f, "bneck_mean_queue_pkts": %.3f, "bneck_mean_queue_bytes": %.1f, "bneck_drops_total": %d, "windows": [%s]}} \
        [join $args ", "] [expr {($T_RUN - $T_START) / 1e6}] [expr {($T_END - $T_RUN) / 1e6}] \
        [expr {$qs_p / max(1, $qs_n)}] [expr {$qs_b / max(1, $qs_n)}] [$fmon set pdrops_] [join $wins ", "]]
    flush stdout
    exit 0
}
$ns at $P(dur) finish
set T_RUN [clock microseconds]
$ns run
