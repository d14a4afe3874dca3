# Paper 000 §IV-C (Table II) in ns-2.35 with ns-2's own web traffic generator, PagePool/WebTraf,
# for the HTTP part of the background (the peer ../shared/peers/ns2/table2.tcl scripts tcpsim's
# HTTP model by hand instead). Written for issue 14; docs/validation/ns2-table2.md has the runs.
#
#   15 Mb/s / 5 ms bottleneck L->R, DropTail `queue` packets both ways; access links 1 Gb/s, queue 1000
#   foreground: NewReno Slow-but-Steady (fid 0) and Impatient (fid 1), 50 ms RTT, start U[0,1),
#               window unlimited
#   background: N/4 FTP (fid 2) + 3N/4 web sessions (fid 3), NewReno SBS, window_ `ftpwin`/`webwin`,
#               RTT U[20,460] ms, start U[0,10)
#   web session: one PagePool/WebTraf per session with one client (right side) and one server
#               (left side): the paper's "unique client/server pair". Pages of `objs` objects
#               (Constant or Exponential), objects `iobj` apart (Exponential), object size in
#               packets from RandomVariable/Pareto or ParetoII (mean `osize`, shape `oshape`),
#               next page `ipage` (Exponential) after the previous one (ipopt 1: after its end,
#               ns-2's default; 0: after its start). Every object is a request connection
#               (client->server, reverse path) and, once the request's ACK is back at the client,
#               a fresh response connection on the same agent pair, reset and turned round
#               (webtraf.tcl launch-req/done-req/launch-resp).
#
# keys (defaults in `opt` below): bg N, seed, dur, warm (measurement window [warm, dur]), queue
#   (bottleneck limit, packets), syn (syn_ and delay_growth_, 0 as tcpsim), singledup, qsample
#   (queue/srtt sampling period), dropfile (default: a temporary file, deleted), ftpwin, webwin
#   (window_ of the background agents), spf (web sessions per HTTP flow, sharing its pair),
#   pages, ipage, ipopt, objs, objdist (const|exp), iobj, osize, oshape, odist (pareto|paretoII),
#   preset, web (webtraf|persist), ssr.
#
# usage: ns table2_webtraf.tcl key=value ...   -> one JSON line on stdout
#   preset=paper|webex|largescale|redpd sets the web keys (explicit keys still win):
#     paper      the paper's text as WebTraf values: 1 object per page, Pareto mean 48 pkts
#                (48 KB of 1 KB packets) shape 1.2, 0.5 s think time from the end of a page
#     webex      ns-2.35 tcl/ex/web-traffic.tcl: inter-page Exp 1 s, 1 object per page,
#                inter-object Exp 0.01 s, object ParetoII mean 10 pkts shape 1.2
#     largescale ns-2.35 tcl/ex/large-scale-web-traffic.tcl: inter-page Exp 15 s, 1 object,
#                inter-object Exp 0.01 s, object ParetoII mean 12 pkts shape 1.2
#     redpd      ns-2.35 tcl/ex/red-pd/helper.tcl (Traffic/Web): inter-page Exp 10 s,
#                objects per page Exp mean 10, inter-object Exp 0.01 s, ParetoII mean 24 shape 1.2
#   web=persist replaces WebTraf by one persistent connection per session (not a WebTraf mode: our
#     own reading of "the server uses TCP to send the file"): each page's objects are sent on the
#     same agent (advanceby), the next page `ipage` after the last ACK; the request is not
#     simulated. ssr = slow_start_restart_ of these agents (ns-2.35 default 1: cwnd back to the
#     initial window after an idle period longer than the RTO; 0 keeps cwnd across pages).

set T_START [clock microseconds]
array set opt {
    bg 16
    seed 1
    dur 1000
    warm 250
    queue 150
    singledup 1
    syn 0
    qsample 0.1
    dropfile ""
    ftpwin 64
    webwin 64
    spf 1
    pages 1000000
    ipage 0.5
    ipopt 1
    objs 1
    objdist const
    iobj 0.01
    osize 48
    oshape 1.2
    odist pareto
    preset paper
    web webtraf
    ssr 1
}
array set presets {
    paper      {ipage 0.5 ipopt 1 objs 1  objdist const iobj 0.01 osize 48 oshape 1.2 odist pareto}
    webex      {ipage 1   ipopt 1 objs 1  objdist const iobj 0.01 osize 10 oshape 1.2 odist paretoII}
    largescale {ipage 15  ipopt 1 objs 1  objdist const iobj 0.01 osize 12 oshape 1.2 odist paretoII}
    redpd      {ipage 10  ipopt 1 objs 10 objdist exp   iobj 0.01 osize 24 oshape 1.2 odist paretoII}
}
array set given {}
foreach a $argv {
    set i [string first = $a]
    set k [string range $a 0 [expr {$i - 1}]]
    if {$i < 1 || ![info exists opt($k)]} { puts stderr "unknown key in $a"; exit 2 }
    set given($k) [string range $a [expr {$i + 1}] end]
}
if {[info exists given(preset)]} { set opt(preset) $given(preset) }
if {![info exists presets($opt(preset))]} { puts stderr "unknown preset $opt(preset)"; exit 2 }
array set opt $presets($opt(preset))
array set opt [array get given]
if {$opt(dropfile) eq ""} { set opt(dropfile) "/tmp/table2_webtraf_drops_[pid].tr"; set rmdrop 1 } else { set rmdrop 0 }

global defaultRNG
$defaultRNG seed $opt(seed)
set rng [new RNG]
$rng seed [expr {$opt(seed) * 7919 + 17}]

set ns [new Simulator]
source [file join [file dirname [info script]] common.tcl]
ns2_tcp_defaults 1000 100000 2 $opt(singledup) $opt(syn)

set L [$ns node]
set R [$ns node]
$ns duplex-link $L $R 15Mb 5ms DropTail
$ns queue-limit $L $R $opt(queue)
$ns queue-limit $R $L $opt(queue)
set qmon [$ns monitor-queue $L $R [open /dev/null w] 1000.0]
# per-fid counters of the forward bottleneck (departures, drops)
set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $L $R] $fmon
# drop trace of the forward bottleneck queue (times of the foreground flows' drops)
set dfile [open $opt(dropfile) w]
set dtr [$ns create-trace Drop $dfile $L $R]
set bq [[$ns link $L $R] queue]
$dtr target [$bq drop-target]
$bq drop-target $dtr

# a sender node on the left and a receiver node on the right, round trip rtt_ms in all
proc endpoints {rtt_ms} {
    global ns L R
    set s [$ns node]
    set d [$ns node]
    set ad [expr {($rtt_ms / 2.0 - 5.0) / 2.0}]
    $ns duplex-link $s $L 1000Mb ${ad}ms DropTail
    $ns duplex-link $R $d 1000Mb ${ad}ms DropTail
    foreach {x y} [list $s $L $L $s $R $d $d $R] { $ns queue-limit $x $y 1000 }
    return [list $s $d]
}

set nflows 0
proc ftpflow {rtt_ms window changes1 fid start} {
    global ns tcp nflows
    lassign [endpoints $rtt_ms] s d
    set i $nflows
    incr nflows
    set tcp($i) [new Agent/TCP/Newreno]
    $tcp($i) set newreno_changes1_ $changes1
    $tcp($i) set window_ $window
    $tcp($i) set fid_ $fid
    set snk [new Agent/TCPSink]
    $ns attach-agent $s $tcp($i)
    $ns attach-agent $d $snk
    $ns connect $tcp($i) $snk
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp($i)
    $ns at $start "$ftp start"
    return $i
}

set fg0 [ftpflow 50 100000 0 0 [$rng uniform 0 1]]
set fg1 [ftpflow 50 100000 1 1 [$rng uniform 0 1]]
set nftp [expr {max(1, ($opt(bg) + 2) / 4)}]
set nhttp [expr {$opt(bg) - $nftp}]
for {set j 0} {$j < $nftp} {incr j} {
    ftpflow [$rng uniform 20 460] $opt(ftpwin) 0 2 [$rng uniform 0 10]
}

# WebTraf with our agents: NewReno SBS, window webwin, fid 3; counts responses and their packets
PagePool/WebTraf set TCPTYPE_ Newreno
PagePool/WebTraf set TCPSINKTYPE_ TCPSink
PagePool/WebTraf set FID_ASSIGNING_MODE_ 2   ;# launch-req/launch-resp leave fid_ alone
Class PagePool/WebTraf/T2 -superclass PagePool/WebTraf
PagePool/WebTraf/T2 instproc alloc-tcp {} {
    global opt
    set t [new Agent/TCP/Newreno]
    $t set newreno_changes1_ 0
    $t set window_ $opt(webwin)
    $t set fid_ 3
    return $t
}
set nresp 0
set nresp_pkts 0
PagePool/WebTraf/T2 instproc done-resp {id pid clnt svr stcp ssnk size sent sent_th {startTime 0} {fid 0}} {
    global nresp nresp_pkts
    incr nresp
    incr nresp_pkts $size
    $self next $id $pid $clnt $svr $stcp $ssnk $size $sent $sent_th $startTime $fid
}

proc rv_obj {} {
    global opt
    if {$opt(odist) eq "pareto"} { set v [new RandomVariable/Pareto] } else { set v [new RandomVariable/ParetoII] }
    $v set avg_ $opt(osize)
    $v set shape_ $opt(oshape)
    return $v
}
set nsess 0
set persist [expr {$opt(web) eq "persist"}]
if {!$persist && $opt(web) ne "webtraf"} { puts stderr "web must be webtraf or persist"; exit 2 }
# persistent reading: one agent pair per session, a page's objects back to back on it
proc page {t} {
    global ns opt nresp nresp_pkts pg_osize pg_objs
    set n [expr {$opt(objdist) eq "exp" ? int(ceil([$pg_objs value])) : int(ceil($opt(objs)))}]
    set pk 0
    for {set k 0} {$k < max($n, 1)} {incr k} { incr pk [expr {max(1, int(ceil([$pg_osize value])))}] }
    incr nresp
    incr nresp_pkts $pk
    $t advanceby $pk
}
if {$persist} {
    set pg_osize [rv_obj]
    set pg_objs [new RandomVariable/Exponential]; $pg_objs set avg_ $opt(objs)
    set pg_think [new RandomVariable/Exponential]; $pg_think set avg_ $opt(ipage)
}
for {set j 0} {$j < $nhttp && $persist} {incr j} {
    lassign [endpoints [$rng uniform 20 460]] srv cli
    for {set k 0} {$k < $opt(spf)} {incr k} {
        set t [new Agent/TCP/Newreno]
        $t set newreno_changes1_ 0
        $t set window_ $opt(webwin)
        $t set slow_start_restart_ $opt(ssr)
        $t set fid_ 3
        set snk [new Agent/TCPSink]
        $ns attach-agent $srv $t
        $ns attach-agent $cli $snk
        $ns connect $t $snk
        $t proc done {} "global ns pg_think; \$ns at \[expr {\[\$ns now\] + \[\$pg_think value\]}\] {page $t}"
        $ns at [$rng uniform 0 10] "page $t"
        incr nsess
    }
}
for {set j 0} {$j < $nhttp && !$persist} {incr j} {
    lassign [endpoints [$rng uniform 20 460]] srv cli
    set pool [new PagePool/WebTraf/T2]
    $pool set-num-client 1
    $pool set-num-server 1
    $pool set-client 0 $cli
    $pool set-server 0 $srv
    $pool set-num-session $opt(spf)
    for {set k 0} {$k < $opt(spf)} {incr k} {
        set ip [new RandomVariable/Exponential]; $ip set avg_ $opt(ipage)
        if {$opt(objdist) eq "exp"} {
            set ps [new RandomVariable/Exponential]; $ps set avg_ $opt(objs)
        } else {
            set ps [new RandomVariable/Constant]; $ps set val_ $opt(objs)
        }
        set io [new RandomVariable/Exponential]; $io set avg_ $opt(iobj)
        $pool create-session $k $opt(pages) [$rng uniform 0 10] $ip $ps $io [rv_obj]
        incr nsess
    }
    $pool set-interPageOption $opt(ipopt)
}

proc snap {} {
    global tcp fg0 fg1 qmon fmon
    set r {}
    foreach i [list $fg0 $fg1] {
        lappend r [list [$tcp($i) set ndatapack_] [$tcp($i) set nrexmitpack_] [$tcp($i) set nrexmit_]]
    }
    set byfid {}
    foreach f [$fmon flows] {
        lappend byfid [$f set flowid_] [list [$f set pdepartures_] [$f set bdepartures_] [$f set pdrops_]]
    }
    return [list $r [$qmon set pdrops_] [$qmon set pdepartures_] [$qmon set bdepartures_] $byfid]
}
set qsum 0.0
set qcnt 0
foreach k {0 1} { set rsum($k) 0.0; set rcnt($k) 0 }
proc sample {} {
    global ns qmon qsum qcnt opt tcp fg0 fg1 rsum rcnt
    set qsum [expr {$qsum + [$qmon set pkts_]}]
    incr qcnt
    foreach k {0 1} i [list $fg0 $fg1] {
        set s [$tcp($i) set srtt_]    ;# ticks << 3
        if {$s > 0} { set rsum($k) [expr {$rsum($k) + $s * 0.01 / 8.0}]; incr rcnt($k) }
    }
    $ns at [expr {[$ns now] + $opt(qsample)}] sample
}
$ns at $opt(warm) sample
proc at_warm {} { global W nresp nresp_pkts NR; set W [snap]; set NR [list $nresp $nresp_pkts] }
$ns at $opt(warm) at_warm

# drops of fids 0 and 1 after the warm-up, from the trace
proc fg_drops {} {
    global opt
    set d(0) {}
    set d(1) {}
    set f [open $opt(dropfile) r]
    while {[gets $f line] >= 0} {
        set x [split $line]
        set fid [lindex $x 7]
        if {($fid == 0 || $fid == 1) && [lindex $x 1] >= $opt(warm)} { lappend d($fid) [lindex $x 1] }
    }
    close $f
    return [list $d(0) $d(1)]
}
# loss events: a drop more than one RTT after the current event's first drop starts a new one
# (tcpsim's LossEventTracker in simulator/core/src/metrics.rs, with the flow's mean RTT)
proc loss_events {times rtt} {
    set n 0
    set first -1e9
    foreach t $times {
        if {$t - $first > $rtt} { incr n; set first $t }
    }
    return $n
}

proc finish {} {
    global ns opt W T_START T_RUN qsum qcnt nresp nresp_pkts NR fg0 fg1 dfile nftp nhttp nsess rsum rcnt rmdrop
    set T_END [clock microseconds]
    flush $dfile
    close $dfile
    set E [snap]
    set win [expr {$opt(dur) - $opt(warm)}]
    set mq [expr {$qcnt > 0 ? $qsum / $qcnt : 0}]
    set rtt_q [expr {0.050 + (1 + $mq) * 1040 * 8 / 15e6}]
    set drops [fg_drops]
    if {$rmdrop} { file delete $opt(dropfile) }
    set fl {}
    foreach k {0 1} name {sbs imp} {
        set a [lindex [lindex $W 0] $k]
        set b [lindex [lindex $E 0] $k]
        set sent [expr {[lindex $b 0] - [lindex $a 0]}]
        set rtx [expr {[lindex $b 1] - [lindex $a 1]}]
        set to [expr {[lindex $b 2] - [lindex $a 2]}]
        set rtt [expr {$rcnt($k) > 0 ? $rsum($k) / $rcnt($k) : $rtt_q}]
        set dl [lindex $drops $k]
        set nd [llength $dl]
        set ne [loss_events $dl $rtt]
        set s1 [expr {max($sent, 1)}]
        lappend fl [format {"%s": {"sent": %d, "retransmits": %d, "timeouts": %d, "drops": %d, "loss_events": %d, "loss_rate": %.6g, "loss_event_rate": %.6g, "m": %.4g, "mean_srtt_s": %.5f, "pkts_per_s": %.2f, "pkts_per_rtt": %.3f, "pkts_per_rtt_qrtt": %.3f}} \
            $name $sent $rtx $to $nd $ne [expr {double($nd) / $s1}] [expr {double($ne) / $s1}] \
            [expr {$ne > 0 ? double($nd) / $ne : 0}] $rtt [expr {$sent / $win}] [expr {$sent / $win * $rtt}] [expr {$sent / $win * $rtt_q}]]
    }
    # per class on the forward bottleneck: share of the departed bytes, packets, drops
    array set fa [lindex $W 4]
    array set fb [lindex $E 4]
    set cls {}
    set cap [expr {15e6 / 8.0 * $win}]
    foreach fid {0 1 2 3} name {sbs imp ftp web} {
        if {![info exists fb($fid)]} { set fb($fid) {0 0 0} }
        if {![info exists fa($fid)]} { set fa($fid) {0 0 0} }
        set p [expr {[lindex $fb($fid) 0] - [lindex $fa($fid) 0]}]
        set by [expr {[lindex $fb($fid) 1] - [lindex $fa($fid) 1]}]
        set dr [expr {[lindex $fb($fid) 2] - [lindex $fa($fid) 2]}]
        lappend cls [format {"%s": {"pkts": %d, "util": %.4f, "drops": %d}} $name $p [expr {$by / $cap}] $dr]
    }
    set bdrops [expr {[lindex $E 1] - [lindex $W 1]}]
    set bdep [expr {[lindex $E 2] - [lindex $W 2]}]
    set util [expr {([lindex $E 3] - [lindex $W 3]) / $cap}]
    set nr [expr {$nresp - [lindex $NR 0]}]
    set nrp [expr {$nresp_pkts - [lindex $NR 1]}]
    set web [format {"preset": "%s", "web": "%s", "ssr": %s, "sessions": %d, "spf": %s, "ipage": %s, "ipopt": %s, "objs": %s, "objdist": "%s", "iobj": %s, "osize": %s, "oshape": %s, "odist": "%s", "webwin": %s, "ftpwin": %s} \
        $opt(preset) $opt(web) $opt(ssr) $nsess $opt(spf) $opt(ipage) $opt(ipopt) $opt(objs) $opt(objdist) $opt(iobj) $opt(osize) $opt(oshape) $opt(odist) $opt(webwin) $opt(ftpwin)]
    puts [format {{"sim": "ns-2.35", "script": "table2_webtraf.tcl", "bg": %d, "ftp": %d, "http": %d, "seed": %d, "dur": %s, "warm": %s, "queue": %s, "syn": %s, "singledup": %s, %s, "setup_wall_s": %.3f, "run_wall_s": %.3f, "mean_queue_pkts": %.2f, "qrtt_s": %.5f, "bneck_util": %.4f, "bneck_drops": %d, "bneck_departures": %d, "responses": %d, "response_pkts": %d, "mean_response_pkts": %.2f, "class": {%s}, %s}} \
        $opt(bg) $nftp $nhttp $opt(seed) $opt(dur) $opt(warm) $opt(queue) $opt(syn) $opt(singledup) $web \
        [expr {($T_RUN - $T_START) / 1e6}] [expr {($T_END - $T_RUN) / 1e6}] $mq $rtt_q $util $bdrops $bdep \
        $nr $nrp [expr {$nr > 0 ? double($nrp) / $nr : 0}] [join $cls ", "] [join $fl ", "]]
    exit 0
}
$ns at $opt(dur) finish
set T_RUN [clock microseconds]
$ns run
