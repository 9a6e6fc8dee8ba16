/// The text `help` prints, and usage errors after their message.
let usage = """
    usage: swiftpjsua <command> [options]

    commands:
      demo                         call yourself over loopback, play a 1 kHz tone into one
                                   leg, record the other, report whether the tone arrived
      listen --port P              auto-answer incoming calls, one line per event
             [--bind ADDR] [--answer-code C] [--answer-after S] [--play F.wav] [--record F.wav]
             [--hangup-after S] [--max-calls N] [call features]
                                   (--answer-after: ring with 180 first, answer S seconds
                                   later; --max-calls: most simultaneous calls, 1 up to the
                                   build's limit, see `version`; more get 486)
             [--echo] [--quiet] [--stats-file F] [--messages]
                                   --echo: send each call back what it receives (through
                                   the audio frame API); --quiet: no line per event;
                                   --stats-file: at exit, write event-delivery latency
                                   (p50/p99/max in µs); --messages: take incoming
                                   MESSAGEs (200) and print them (without it they get 480),
                                   and unsolicited message-waiting NOTIFYs (else 481)
             [--presence-status online|busy|away|offline[:NOTE]] [--busy-in-calls]
             [--buddy URI]... [--blf URI]...
                                   own presence for watchers (--watchers URI,...), busy
                                   while a call is up; print each buddy's presence and each
                                   busy lamp's dialog state as lines
      call URI                     place a call; exit 0 when it was confirmed and ended
                                   (not by --media-timeout or a lost connection); when
                                   the far end transfers it (REFER), follow the new call
                                   too and exit when the last one ends, after a short wait
                                   (at most SIP's T2, 4 s) to ACK a retransmitted 200
           [--port P] [--bind ADDR] [--play F.wav] [--record F.wav] [--hangup-after S]
           [call features]
      phone [--port P] [--bind ADDR]
                                   an interactive softphone: one command per line on
                                   standard input (? lists them: dial, answer, hang up,
                                   hold, resume, DTMF, transfer, re-INVITE, messages), one
                                   line per event; end of input quits
      message URI --text T         send one MESSAGE and print its final status; exit 0
              [--content-type C] [--port P] [--bind ADDR]
                                   for a 2xx (default type text/plain)
      register --registrar URI --id URI [--username U --password-env VAR|--ha1-env VAR] [--once]
                                   register and print registration events until stopped;
                                   with --once: register, print the outcome, unregister,
                                   exit 0 only if the registration succeeded

    account options (for register, call, message, phone and listen; without them call and listen use a
    local account on their own address):
      --registrar URI              the registrar, e.g. sip:sip.example.com (needs --id)
      --id URI                     the account's identity (address-of-record); without
                                   --registrar the account does not register
      --username U                 digest username; needs --id and a secret. Without
                                   --registrar the credentials answer the 401/407
                                   challenges of the account's calls and requests
      --password-env VAR           take the password from environment variable VAR
      --ha1-env VAR                instead of a password, take its HA1 from environment
                                   variable VAR: H(username:realm:password) in hex, e.g.
                                   printf %s alice:example.com:PW | md5sum; needs --realm
      --ha1-algorithm md5|sha-256  the hash of the --ha1-env HA1 (default md5; sha-256
                                   with pjproject 2.15.1 or later)
      --realm R                    digest realm the credentials are for (default any)
      --proxy URI|none             outbound proxy (default: the registrar, loose routing)
      --transport udp|tcp|tls      SIP transport (default udp; over IPv6 when --bind is an
                                   IPv6 address, or with udp6, tcp6, tls6)
      --ca-file PEM                CA certificates to trust for TLS (default: the system's)
      --expires S                  registration lifetime to ask for (default 300)
      --retry S                    seconds between attempts after a failure (default 300)
      --media-timeout S|off        end a confirmed call that receives no RTP for S seconds
                                   (1-3600; default 30; not while either side holds it)
      --transport-loss end|reinvite  when the TCP/TLS connection under a confirmed call
                                   is lost: end the call, or re-INVITE over a new
                                   connection and end it only if that fails (default)
      --srtp MODE[,KEYING...][,tls|,sips]
                                   encrypted media: disabled (default), optional (SRTP
                                   when the peer takes it) or mandatory (488 or a failed
                                   call otherwise); keying sdes and/or dtls, in order
                                   (default sdes); tls/sips: SRTP only over a TLS hop or
                                   SIPS; media lines then end with srtp SUITE/KEYING
      --who-may-call servers|contact-user|anyone
                                   out-of-dialog INVITEs, SUBSCRIBEs, MESSAGEs... accepted
                                   only from the registrar/proxy for our Contact user
                                   (servers, the default: 403/404 otherwise), only for
                                   our Contact user from anywhere, or from anyone
      --watchers URI[,URI...]      who may subscribe to the account's presence (403 for
                                   everyone else; nobody by default)

    call policies (for call, listen and phone; the account's calls both ways):
      --100rel off|supported|required
                                   reliable provisional responses (RFC 3262): leave 100rel
                                   out of Supported, advertise it (default), or send
                                   Require: 100rel (a peer without it answers 420) and
                                   take only callers that support it (else 421)
      --session-timers off|optional|required|always
                                   session timers (RFC 4028): off (no Session-Expires, no
                                   timer in Supported), optional (default: when the peer
                                   uses them), required (Require: timer; a caller without
                                   them gets 421), always (even with a peer without them)
      --session-expires S          the Session-Expires to ask for (default 1800)
      --min-se S                   the shortest interval accepted, Min-SE (default 90,
                                   at least 90; --session-expires at least --min-se).
                                   pjsip has no refresher choice: the UAS names it, and
                                   the refresher sends a re-INVITE or UPDATE at half the
                                   interval

    call features (for call and listen; each confirmed call):
      --header 'Name: value'       add a header to the INVITE (call) or the answer (listen);
                                   repeat for more headers
      --dtmf DIGITS                send DIGITS (0-9 * # A-D) by RFC 4733 once confirmed
      --transfer-to URI            blind-transfer the call (REFER) once confirmed, and
                                   hang it up once the transfer succeeded (final 2xx)
      --hold-after S               put the call on hold S seconds after it is confirmed
      --stats                      print a 'stats' line per call every second (loss both
                                   ways, jitter, RTT, MOS, levels; key=value) and a line
                                   when a quality warning is raised or cleared
    DTMF received, hold and resume (media lines) and transfer progress are printed.

      version                      the pjproject loaded and the one compiled against (exit 1
                                   when they differ), which thread carries RTP, and the
                                   build's call limit
      help                         this text

    options for every command:
      --bind ADDR                  local address for SIP and RTP (default: every address;
                                   demo: 127.0.0.1)
      --rate-limit off|N/B         new requests (INVITE, SUBSCRIBE, MESSAGE...) one source
                                   address may start per second, in bursts of B (default
                                   10/20; beyond: 503 with Retry-After)
      --max-ringing off|N          incoming calls ringing at once (default 4; beyond: 486)
      --public-address ADDR        address to advertise in Contact, Via and SDP instead
                                   of the bound one (a host behind 1:1 NAT)
      --keep-alive S|off           behind NAT: a keep-alive to the registrar every S
                                   seconds (2-86400; pjsua sends it up to a fifth early)
                                   once registered over UDP (default 15)
      --contact-rewrite on|always|off
                                   behind NAT: re-register with the address the registrar
                                   saw (received/rport) and use it in Via; always: even a
                                   private one seen by a public registrar; off: neither
                                   (default on)
      --sdp-nat-rewrite on|off     behind NAT without STUN/ICE: put the address the
                                   registrar saw in calls' SDP (default off)
      --nat64                      the account is on an IPv6-only network behind NAT64/DNS64
                                   (needs an IPv6 --bind; give --stun for calls: it is asked
                                   over IPv6, and its IPv4 answer goes in the SDP)
      --log-level N                pjsip log lines (0-6) to standard error
      --codecs LIST                codecs to offer first, most preferred first, by id or
                                   prefix, comma-separated (default opus,G722,PCMU,PCMA;
                                   "pjmedia": pjmedia's own order)
      --jitter-buffer adaptive|fixed:MS|MIN-MAX
                                   receive jitter buffer: pjmedia's adaptive prefetch (the
                                   default), a fixed prefetch of MS, or one adapting between
                                   MIN and MAX ms (a frame is 20 ms for opus, 10 for G.711)
      --jb-discard none|fixed-rate|progressive
                                   how the buffer sheds delay (default progressive)
      --opus-bitrate auto|BPS      opus encoder bitrate, 6000-510000 (default auto)
      --opus-complexity N          opus encoder complexity 0-10 (default 5)
      --opus-ptime MS              opus packet time 10, 20, 40 or 60 (default 20)
      --opus-fec on|off            offer and use opus in-band FEC (default on)
      --opus-loss PCT              packet loss the opus encoder plans for, 0-99 (default 5;
                                   0: no FEC sent)
      --opus-dtx                   opus discontinuous transmission during silence
      --rtp-ports A-B              local UDP ports for RTP/RTCP (default 4000-9999; each
                                   call's search starts at a random even port of it)
      --nameserver ADDR[:PORT]     a DNS server (IP address, port 53 unless given; repeat or
                                   comma-separate up to 4): registrars and proxies named by
                                   domain are found by SRV records, with failover to the next
                                   SRV target when one stops answering (default: the system's
                                   resolver, A/AAAA records only)
      --t1 MS                      SIP's round-trip estimate T1 (default 500); an unanswered
                                   request fails after 64 x T1 (32 s by default)
      --follow-network             (listen, call, register) watch the network (netlink) and,
                                   after each change, restart the listeners, register again
                                   and re-INVITE confirmed calls; "network-change" lines
                                   show each step; without it, `kill -USR1 <pid>` makes
                                   listen, call and register handle a network change once
      --stun HOST[:PORT][,...]     STUN servers for the server-reflexive address (up to 8)
      --ice                        ICE for calls' audio (host, server-reflexive and, with
                                   --turn, relayed candidates; no trickle); not on a
                                   loopback --bind: pjnath takes no 127.0.0.1 candidate
      --turn URI                   TURN server for relayed candidates (needs --ice):
                                   turn:[USER[:PASSWORD]@]HOST[:PORT][?transport=udp|tcp]
                                   or turns:... for TLS
      --turn-password-env VAR      take the TURN password from environment variable VAR
    With --stun, --ice or --turn, call and listen print each call's media path: the pair
    ICE nominated ("ice completed ... rtp relayed A -> relayed B"), or where RTP comes from.

    WAV files are 16-bit PCM; --play stops while the tool holds a call and starts again
    from the beginning on resume; a call to an address where nothing answers ends after
    SIP's 32 s transaction timeout with 408.
    """
