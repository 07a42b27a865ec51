package dev.fairway.samples.lab;

/**
 * What one scenario x strategy run measured. Aggregates cover the calls started inside the measured
 * window, each followed to its end; the time series (by completion time, from the window's start) also covers the recovery tail.
 */
public final class RunResult {
  final Scenario scenario;
  final String strategy;
  /** The kind of client the users called through ({@code --client}). */
  final LabClient.Kind client;
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

  /**
   * Calls the clients still counted in flight once every user had stopped (each call followed to its
   * end): 0 unless a call path kept its pick.
   */
  final int leftInFlight;

  /** What the calls started in the window came to; {@code leftInFlight}: see the field. */
  record Calls(long completed, long errors, long retries, long hedges, long[] perBackend, String errorSummary,
      int leftInFlight) {}

  /** Latency percentiles of the successful calls, in milliseconds. */
  record Latency(double meanMs, double p50Ms, double p95Ms, double p99Ms, double p999Ms) {
    /** From a histogram of microseconds. */
    static Latency of(org.HdrHistogram.Histogram micros) {
      return new Latency(
          micros.getTotalCount() == 0 ? 0 : micros.getMean() / 1000.0,
          micros.getValueAtPercentile(50) / 1000.0,
          micros.getValueAtPercentile(95) / 1000.0,
          micros.getValueAtPercentile(99) / 1000.0,
          micros.getValueAtPercentile(99.9) / 1000.0);
    }
  }

  /** The time series by completion time, in buckets from the window's start. */
  record Series(double bucketSeconds, long[][] perBackend, long[] errors, double observedSeconds) {}

  /** The fault and what followed it; see the fields of the same names. */
  record Faults(double faultAtSeconds, double restartAtSeconds, int inFlightAtKill, double recoverySeconds,
      double baselineShare, double failingShare) {}

  RunResult(Scenario scenario, String strategy, LabClient.Kind client, int users, int clients, double measuredSeconds,
      double limitRps, Calls calls, Latency latency, Series series, Faults faults) {
    this.scenario = scenario;
    this.strategy = strategy;
    this.client = client;
    this.leftInFlight = calls.leftInFlight();
    this.users = users;
    this.clients = clients;
    this.measuredSeconds = measuredSeconds;
    this.limitRps = limitRps;
    this.completed = calls.completed();
    this.errors = calls.errors();
    this.retries = calls.retries();
    this.hedges = calls.hedges();
    this.perBackend = calls.perBackend();
    this.errorSummary = calls.errorSummary();
    this.meanMs = latency.meanMs();
    this.p50Ms = latency.p50Ms();
    this.p95Ms = latency.p95Ms();
    this.p99Ms = latency.p99Ms();
    this.p999Ms = latency.p999Ms();
    this.bucketSeconds = series.bucketSeconds();
    this.seriesPerBackend = series.perBackend();
    this.seriesErrors = series.errors();
    this.observedSeconds = series.observedSeconds();
    this.faultAtSeconds = faults.faultAtSeconds();
    this.restartAtSeconds = faults.restartAtSeconds();
    this.inFlightAtKill = faults.inFlightAtKill();
    this.recoverySeconds = faults.recoverySeconds();
    this.baselineShare = faults.baselineShare();
    this.failingShare = faults.failingShare();
  }

  public Scenario scenario() {
    return scenario;
  }

  public String strategy() {
    return strategy;
  }

  /** The {@code --client} the users called through. */
  public LabClient.Kind client() {
    return client;
  }

  /** See {@link #leftInFlight}. */
  public int leftInFlight() {
    return leftInFlight;
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
