# N long-lived TCP flows through one bottleneck, for tcpsim's aggregate cross-check
# (simulator/validation/ns2_crosscheck.py --suite aggregate; docs/validation/ns2-crosscheck.md).
#
#   S_i --access--> L ==bottleneck==> R --access--> D_i      i = 0..N-1
#
# usage: ns dumbbell.tcl key=value ...     -> one JSON line on stdout at the end of the run
#
# Every flow is the same variant (det.tcl's names), starts at Uniform[0, spread) from its own
# RNG stream, and is measured over [warm, dur]: packets sent and resent, and goodput from what
# its sender saw acknowledged (tcpsim counts what reached the receiver: the two differ by what
# was in between at the window's edges, a whole recovery's worth when one straddles `warm`).
# `uniform` > 0 drops data packets on the bottleneck with that probability (after the queue).

array set opt {
    variant newreno-sbs
    flows 1
    bw 15
    rtt 50
    bdelay 24
    queue 150
    window 100000
    dur 100
    warm 10
    seed 1
    spread 1.0
    uniform 0
    singledup 1
}
source [file join [file dirname [info script]] common.tcl]
parse_key_values opt $argv

global defaultRNG
$defaultRNG seed $opt(seed)
set startrng [new RNG]
$startrng seed [expr {$opt(seed) * 7919 + 17}]
set ns [new Simulator]

ns2_tcp_defaults 1000 $opt(window) 2 $opt(singledup) false

set L [$ns node]
set R [$ns node]
$ns duplex-link $L $R $opt(bw)Mb $opt(bdelay)ms DropTail
$ns queue-limit $L $R $opt(queue)
$ns queue-limit $R $L $opt(queue)
set qmon [$ns monitor-queue $L $R [open /dev/null w] 1000.0]
set accdelay [expr {($opt(rtt) / 2.0 - $opt(bdelay)) / 2.0}]

if {$opt(uniform) > 0} {
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ $opt(uniform)
    $em ranvar [new RandomVariable/Uniform]
    set lossmon [new Agent/LossMonitor]
    $ns attach-agent $R $lossmon
    $ns lossmodel $em $L $R
    $em drop-target $lossmon
}

for {set i 0} {$i < $opt(flows)} {incr i} {
    set S [$ns node]
    set D [$ns node]
    $ns duplex-link $S $L 1000Mb ${accdelay}ms DropTail
    $ns duplex-link $R $D 1000Mb ${accdelay}ms DropTail
    foreach {a b} [list $S $L $L $S $R $D $D $R] { $ns queue-limit $a $b 1000 }
    set sink Agent/TCPSink
    switch -- $opt(variant) {
        tahoe             { set tcp($i) [new Agent/TCP] }
        reno              { set tcp($i) [new Agent/TCP/Reno] }
        newreno-sbs       { set tcp($i) [new Agent/TCP/Newreno]; $tcp($i) set newreno_changes1_ 0 }
        newreno-impatient { set tcp($i) [new Agent/TCP/Newreno]; $tcp($i) set newreno_changes1_ 1 }
        sack              { set tcp($i) [new Agent/TCP/Sack1]; set sink Agent/TCPSink/Sack1 }
        fack              { set tcp($i) [new Agent/TCP/Fack];  set sink Agent/TCPSink/Sack1 }
        vegas             { set tcp($i) [new Agent/TCP/Vegas] }
        default           { puts stderr "unknown variant $opt(variant)"; exit 2 }
    }
    $tcp($i) set fid_ $i
    set snk [new $sink]
    $ns attach-agent $S $tcp($i)
    $ns attach-agent $D $snk
    $ns connect $tcp($i) $snk
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp($i)
    $ns at [expr {$opt(spread) > 0 ? [$startrng uniform 0 $opt(spread)] : 0.0}] "$ftp start"
}

proc counters {} {
    global tcp opt qmon lossmon
    set r {}
    for {set i 0} {$i < $opt(flows)} {incr i} {
        lappend r [list [$tcp($i) set ack_] [$tcp($i) set nrexmitpack_] [$tcp($i) set nrexmit_] [$tcp($i) set ndatapack_]]
    }
    set u [expr {[info exists lossmon] ? [$lossmon set npkts_] : 0}]
    return [list $r [$qmon set pdrops_] $u]
}
proc at_warm {} { global W; set W [counters] }
$ns at $opt(warm) at_warm

proc finish {} {
    global opt W
    set E [counters]
    set win [expr {$opt(dur) - $opt(warm)}]
    set flows {}
    for {set i 0} {$i < $opt(flows)} {incr i} {
        set a [lindex [lindex $W 0] $i]
        set b [lindex [lindex $E 0] $i]
        lappend flows [format {{"goodput_bps": %.1f, "retransmits": %d, "timeouts": %d, "data_pkts_sent": %d}} \
            [expr {([lindex $b 0] - [lindex $a 0]) * 8000.0 / $win}] \
            [expr {[lindex $b 1] - [lindex $a 1]}] [expr {[lindex $b 2] - [lindex $a 2]}] \
            [expr {[lindex $b 3] - [lindex $a 3]}]]
    }
    puts [format {{"sim": "ns-2.35", "variant": "%s", "flows": [%s], "queue_drops": %d, "loss_drops": %d}} \
        $opt(variant) [join $flows ", "] [expr {[lindex $E 1] - [lindex $W 1]}] [expr {[lindex $E 2] - [lindex $W 2]}]]
    flush stdout
    exit 0
}
$ns at $opt(dur) finish
$ns run
