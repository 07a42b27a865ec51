package dev.fairway.samples.lab;

/**
 * What one scenario x strategy run measured. Aggregates cover the calls started inside the measured
 * window, each followed to its end; the time series (by completion time, from the window's start) also covers the recovery tail.
 */
public final class RunResult {
  final Scenario scenario;
  final String strategy;
  final int users;
  /** K: independent clients (balancer + OkHttp client each) the users were spread over. */
  final int clients;
  final double measuredSeconds;
  final long completed; // successful calls started in the window
  final double limitRps;
  final double meanMs;
  final double p50Ms;
  final double p95Ms;
  final double p99Ms;
  final long errors;
  final long retries;
  final long[] perBackend;
  /** Width of one series bucket, in seconds. */
  final double bucketSeconds;
  /** [bucket][backend 0..3] successful completions. */
  final long[][] seriesPerBackend;
  /** [bucket] caller-visible errors. */
  final long[] seriesErrors;
  /** Seconds from window start until the users stopped (the series' useful length). */
  final double observedSeconds;
  /**
   * Seconds from window start to the fault: the kill of backend-1 (failure, recovery), its slowdown
   * (slowdown) or backend-2's first fast 503s (fastfail); NaN where there is none.
   */
  final double faultAtSeconds;
  /** Seconds from window start to the restart of backend-1, or NaN. */
  final double restartAtSeconds;
  /** Calls in flight to backend-1 (as the balancer saw them) when it was killed, or -1. */
  final int inFlightAtKill;
  /** Seconds from restart until backend-1 carried its share again, NaN if it did not within the run. */
  final double recoverySeconds;
  /** Backend-1's share of calls before the kill (recovery's yardstick), or NaN. */
  final double baselineShare;
  /**
   * Fastfail: the share of the requests reaching any backend, from one second (time scale 1) after
   * the fault to the window's end, that reached the failing backend-2; NaN in other scenarios.
   */
  final double failingShare;
  /** The most frequent caller-visible errors ("2 x SocketException: ..."), or "". */
  final String errorSummary;
  final double p999Ms;
  /** Hedges the interceptors sent during the window (the extra calls of {@code --hedge}). */
  final long hedges;

  RunResult(Scenario scenario, String strategy, int users, int clients, double measuredSeconds, long completed,
      double limitRps, double meanMs, double p50Ms, double p95Ms, double p99Ms, long errors, long retries,
      long[] perBackend, double bucketSeconds, long[][] seriesPerBackend, long[] seriesErrors, double observedSeconds,
      double faultAtSeconds, double restartAtSeconds, int inFlightAtKill, double recoverySeconds, double baselineShare,
      double failingShare, String errorSummary, double p999Ms, long hedges) {
    this.scenario = scenario;
    this.strategy = strategy;
    this.users = users;
    this.clients = clients;
    this.measuredSeconds = measuredSeconds;
    this.completed = completed;
    this.limitRps = limitRps;
    this.meanMs = meanMs;
    this.p50Ms = p50Ms;
    this.p95Ms = p95Ms;
    this.p99Ms = p99Ms;
    this.errors = errors;
    this.retries = retries;
    this.perBackend = perBackend;
    this.bucketSeconds = bucketSeconds;
    this.seriesPerBackend = seriesPerBackend;
    this.seriesErrors = seriesErrors;
    this.observedSeconds = observedSeconds;
    this.faultAtSeconds = faultAtSeconds;
    this.restartAtSeconds = restartAtSeconds;
    this.inFlightAtKill = inFlightAtKill;
    this.recoverySeconds = recoverySeconds;
    this.baselineShare = baselineShare;
    this.failingShare = failingShare;
    this.errorSummary = errorSummary;
    this.p999Ms = p999Ms;
    this.hedges = hedges;
  }

  public Scenario scenario() {
    return scenario;
  }

  public String strategy() {
    return strategy;
  }

  public long completed() {
    return completed;
  }

  public long errors() {
    return errors;
  }

  public long retries() {
    return retries;
  }

  public long[] perBackend() {
    return perBackend.clone();
  }

  public double throughputRps() {
    return completed / measuredSeconds;
  }

  public double limitRps() {
    return limitRps;
  }

  public double shareOfLimit() {
    return limitRps > 0 ? throughputRps() / limitRps : 0;
  }

  public long hedges() {
    return hedges;
  }

  /** Hedges per successful call: the extra load hedging added. */
  public double hedgeShare() {
    return completed == 0 ? 0 : (double) hedges / completed;
  }

  public int inFlightAtKill() {
    return inFlightAtKill;
  }

  public double recoverySeconds() {
    return recoverySeconds;
  }

  public int clients() {
    return clients;
  }

  /** See {@link #failingShare}: fastfail's share of requests that still reached backend-2 after the grace. */
  public double failingShare() {
    return failingShare;
  }

  double backendShare(int backend) {
    long total = 0;
    for (long n : perBackend) {
      total += n;
    }
    return total == 0 ? 0 : (double) perBackend[backend] / total;
  }
}
