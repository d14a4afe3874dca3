# Shared by the ns-2 scripts beside it (`source` it after `array set` of the defaults):
# key=value arguments, and ns-2.35's Agent/TCP defaults written out where tcpsim's `ns2`
# profile must match them (docs/simulator.md, "TCP profiles").

# Sets the caller's array `name` from `key=value` arguments; every key must have a default.
proc parse_key_values {name argv} {
    upvar $name opt
    foreach a $argv {
        set i [string first = $a]
        if {$i < 0} { puts stderr "bad argument $a (want key=value)"; exit 2 }
        set k [string range $a 0 [expr {$i - 1}]]
        if {![info exists opt($k)]} { puts stderr "unknown key $k"; exit 2 }
        set opt($k) [string range $a [expr {$i + 1}] end]
    }
}

# ns-2.35's TCP (ns-default.tcl) with the run's payload size, window_, windowInit_, singledup_
# (limited transmit) and syn_ (a SYN round trip before data, delay_growth_ with it); a 40-byte
# TCP/IP header, ACKs of 40 bytes, no burst limit, 10 ms timer, RTO 0.2-60 s from 3 s, no
# timestamps, ssthresh_ 0 (reset() takes window_).
proc ns2_tcp_defaults {pkt window init singledup syn} {
    Agent/TCP set packetSize_ $pkt
    Agent/TCP set tcpip_base_hdr_size_ 40
    Agent/TCP set window_ $window
    Agent/TCP set windowInit_ $init
    Agent/TCP set maxburst_ 0
    Agent/TCP set tcpTick_ 0.01
    Agent/TCP set minrto_ 0.2
    Agent/TCP set maxrto_ 60
    Agent/TCP set rtxcur_init_ 3.0
    Agent/TCP set timestamps_ false
    Agent/TCP set ssthresh_ 0
    Agent/TCP set singledup_ $singledup
    Agent/TCP set syn_ $syn
    Agent/TCP set delay_growth_ $syn
    Agent/TCPSink set packetSize_ 40
}
