# The privileged side of the root shell; rootshell.go describes its requests and replies.
use strict; use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
use constant WNOHANG => 1; # <sys/wait.h> on Linux; POSIX would be a large module to load at every start
my $marker = shift @ARGV;
$SIG{PIPE} = 'IGNORE';
nonblocking(\*STDOUT);
my ($in, $out, %jobs) = ('', '');
my $eof = 0;
print STDERR $marker;
while (!$eof || length $out) {
	my ($r, $w, $poll) = ('', '', undef);
	vec($r, fileno(STDIN), 1) = 1 unless $eof;
	vec($w, fileno(STDOUT), 1) = 1 if length $out;
	for my $j (values %jobs) {
		vec($r, fileno($_), 1) = 1 for grep { defined } $j->{out}, $j->{err};
		vec($w, fileno($j->{in}), 1) = 1 if $j->{in};
		$poll = $j->{poll} if $j->{poll} && !($poll && $poll < $j->{poll});
	}
	next if select($r, $w, undef, $poll) < 0;
	if (!$eof && vec($r, fileno(STDIN), 1)) {
		my $n = sysread(STDIN, $in, 65536, length $in);
		$eof = 1 unless $n;
		requests();
	}
	for my $j (values %jobs) {
		collect($j, $_, $r) for 'out', 'err';
		feed($j) if $j->{in} && vec($w, fileno($j->{in}), 1);
		reap($j);
		finish($j);
	}
	if (length $out && vec($w, fileno(STDOUT), 1)) {
		my $n = syswrite(STDOUT, $out);
		exit 74 if !defined $n && !$!{EAGAIN};
		substr($out, 0, $n // 0) = '';
	}
}
sub nonblocking { my $fh = shift; my $f = fcntl($fh, F_GETFL, 0); fcntl($fh, F_SETFL, $f | O_NONBLOCK); }
sub requests {
	while ($in =~ /\A(run|kill) (\d+) (\d+) (\d+)\n/) {
		my ($op, $id, $sl, $il) = ($1, $2, $3, $4);
		my $head = length($&);
		return if length($in) < $head + $sl + $il;
		my $script = substr($in, $head, $sl);
		my $stdin = substr($in, $head + $sl, $il);
		substr($in, 0, $head + $sl + $il) = '';
		if ($op eq 'run') { start($id, $script, $stdin) } elsif ($jobs{$id}) { kill 'KILL', -$jobs{$id}{pid} }
	}
	die "gpucluster root shell: bad request\n" if $in =~ /\n/ || length($in) > 64;
}
sub start {
	my ($id, $script, $stdin) = @_;
	pipe(my $ir, my $iw) && pipe(my $or, my $ow) && pipe(my $er, my $ew) or die "pipe: $!";
	my $pid = fork() // die "fork: $!";
	if (!$pid) {
		$SIG{PIPE} = 'DEFAULT';
		setpgrp(0, 0);
		open(STDIN, '<&', $ir) && open(STDOUT, '>&', $ow) && open(STDERR, '>&', $ew) && chdir('/')
			&& exec('/bin/sh', '-c', $script);
		exit 127;
	}
	setpgrp($pid, $pid);
	close($_) for $ir, $ow, $ew;
	nonblocking($_) for $iw, $or, $er;
	my $j = { id => $id, pid => $pid, in => $iw, stdin => $stdin, out => $or, err => $er, got => { out => '', err => '' } };
	if (!length $stdin) { close($iw); $j->{in} = undef }
	$jobs{$id} = $j;
}
sub feed {
	my $j = shift;
	my $n = syswrite($j->{in}, $j->{stdin});
	substr($j->{stdin}, 0, $n) = '' if $n;
	if ((!defined $n && !$!{EAGAIN}) || !length $j->{stdin}) { close($j->{in}); $j->{in} = undef }
}
sub collect {
	my ($j, $which, $r) = @_;
	my $fh = $j->{$which};
	return unless $fh && vec($r, fileno($fh), 1);
	my $n = sysread($fh, $j->{got}{$which}, 65536, length $j->{got}{$which});
	return if !defined $n && $!{EAGAIN};
	if (!$n) { close($fh); $j->{$which} = undef }
}
sub reap {
	my $j = shift;
	return if $j->{out} || $j->{err} || defined $j->{status};
	my $pid = waitpid($j->{pid}, WNOHANG);
	if ($pid == 0) { $j->{poll} = $j->{poll} ? min(2 * $j->{poll}, 0.1) : 0.0002; return }
	$j->{status} = $pid < 0 ? 127 : $? & 127 ? 128 + ($? & 127) : $? >> 8;
}
sub min { $_[0] < $_[1] ? $_[0] : $_[1] }
sub finish {
	my $j = shift;
	return if $j->{out} || $j->{err} || !defined $j->{status};
	close($j->{in}) if $j->{in};
	my ($o, $e) = @{$j->{got}}{'out', 'err'};
	$out .= sprintf("\@\@done %d %d %d %d\n", $j->{id}, $j->{status}, length $o, length $e) . $o . $e;
	delete $jobs{$j->{id}};
}
