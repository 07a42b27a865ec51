package dev.fairway.samples.lab;

import java.io.IOException;
import java.time.Duration;

/**
 * What a scenario does to its backends during one run, and what the run records about it: a fresh
 * instance per run ({@link Scenario#faultScript}). {@link #prepare} runs before the warm-up (a steady
 * property of the fleet, such as jitter); {@link #step} runs every couple of milliseconds of the
 * measured window with the fraction of the window gone, and acts once when its moment comes. The
 * moments are {@link Scenario}'s own timeline ({@link Scenario#backendOneUp}, {@link Scenario#slowAt},
 * {@link Scenario#fastFailingAt}), which the limit ({@link Limit}) reads too.
 */
abstract class FaultScript {
  /** What the script needs of the run: its backends and clients, and where the window started. */
  record Run(Backend[] backends, LabClient[] clients, LabOptions options, long windowStartNanos) {
    double secondsIntoWindow() {
      return (System.nanoTime() - windowStartNanos) / 1e9;
    }
  }

  /** Set by the script when it acts (kill, slowdown, fast failure); see {@link #faultAtSeconds()}. */
  double faultAtSeconds = Double.NaN;

  /** Seconds from the window's start to the fault; NaN until there is one, and in scenarios without. */
  final double faultAtSeconds() {
    return faultAtSeconds;
  }

  void prepare(Backend[] backends) {}

  abstract void step(double fraction, Run run) throws IOException;

  /** Seconds from the window's start to backend-1's restart, or NaN. */
  double restartAtSeconds() {
    return Double.NaN;
  }

  /** Calls in flight to backend-1 (as the balancers saw them) when it was killed, or -1. */
  int inFlightAtKill() {
    return -1;
  }

  /**
   * Fastfail's measure, read at the window's end: of the requests that reached any backend from the
   * end of the grace to now, the share that reached the failing one; NaN in other scenarios and if the
   * window ended before the grace did.
   */
  double failingShare(Backend[] backends) {
    return Double.NaN;
  }

  /** Nothing happens to the backends. */
  static FaultScript none() {
    return new FaultScript() {
      @Override
      void step(double fraction, Run run) {}
    };
  }

  /** Every backend makes {@code percent}% of its requests {@code factor}x slower, from before the warm-up. */
  static FaultScript jitter(int percent, int factor, long seed) {
    return new FaultScript() {
      @Override
      void prepare(Backend[] backends) {
        for (int i = 0; i < backends.length; i++) {
          backends[i].jitter(percent / 100.0, factor, seed + i);
        }
      }

      @Override
      void step(double fraction, Run run) {}
    };
  }

  /** Backend-1 is killed when {@code scenario} says it is down, and restarted when it says it is up again. */
  static FaultScript killBackendOne(Scenario scenario) {
    return new KillBackendOne(scenario);
  }

  /** Backend {@code backend} takes {@code factor}x its service time from the moment {@code scenario} says. */
  static FaultScript slowDown(Scenario scenario, int backend, int factor) {
    return new FaultScript() {
      @Override
      void step(double fraction, Run run) {
        if (Double.isNaN(faultAtSeconds) && scenario.slowAt(fraction)) {
          run.backends()[backend].slowDown(factor);
          faultAtSeconds = run.secondsIntoWindow();
        }
      }
    };
  }

  /**
   * Backend {@code backend} answers 503 at once from the moment {@code scenario} says; the requests
   * reaching each backend are counted from {@code grace} (time scale 1) later on.
   */
  static FaultScript failFast(Scenario scenario, int backend, Duration grace) {
    return new FailFast(scenario, backend, grace);
  }

  /** Backend {@code failing}'s share of the requests that reached any backend between two counts; NaN if none did. */
  static double failingShare(long[] before, long[] after, int failing) {
    long all = 0;
    for (int i = 0; i < before.length; i++) {
      all += after[i] - before[i];
    }
    return all == 0 ? Double.NaN : (double) (after[failing] - before[failing]) / all;
  }

  static long[] received(Backend[] backends) {
    long[] out = new long[backends.length];
    for (int i = 0; i < backends.length; i++) {
      out[i] = backends[i].received();
    }
    return out;
  }

  /** Calls in flight to {@code backend} as all clients see them together. */
  static int inFlight(LabClient[] clients, Backend backend) {
    int sum = 0;
    for (LabClient client : clients) {
      if (client != null) {
        sum += client.inFlight(backend.port());
      }
    }
    return sum;
  }

  private static final class KillBackendOne extends FaultScript {
    private final Scenario scenario;
    private double restartAt = Double.NaN;
    private int inFlightAtKill = -1;

    KillBackendOne(Scenario scenario) {
      this.scenario = scenario;
    }

    @Override
    void step(double fraction, Run run) throws IOException {
      Backend one = run.backends()[0];
      boolean killed = !Double.isNaN(faultAtSeconds);
      if (!killed && !scenario.backendOneUp(fraction)) {
        int before = inFlight(run.clients(), one);
        faultAtSeconds = run.secondsIntoWindow(); // kill() closes the listener first thing
        one.kill();
        // Calls picked while the server was stopping (a few ms) die with it too.
        inFlightAtKill = Math.max(before, inFlight(run.clients(), one));
      } else if (killed && Double.isNaN(restartAt) && scenario.backendOneUp(fraction)) {
        one.restart();
        restartAt = run.secondsIntoWindow();
      }
    }

    @Override
    double restartAtSeconds() {
      return restartAt;
    }

    @Override
    int inFlightAtKill() {
      return inFlightAtKill;
    }
  }

  private static final class FailFast extends FaultScript {
    private final Scenario scenario;
    private final int backend;
    private final Duration grace;
    private long graceEndNanos = Long.MAX_VALUE;
    private long[] receivedAfterGrace; // null until the grace ends

    FailFast(Scenario scenario, int backend, Duration grace) {
      this.scenario = scenario;
      this.backend = backend;
      this.grace = grace;
    }

    @Override
    void step(double fraction, Run run) {
      if (Double.isNaN(faultAtSeconds) && scenario.fastFailingAt(fraction)) {
        run.backends()[backend].failFast();
        faultAtSeconds = run.secondsIntoWindow();
        graceEndNanos = System.nanoTime() + run.options().scaled(grace).toNanos();
      }
      if (receivedAfterGrace == null && System.nanoTime() >= graceEndNanos) {
        receivedAfterGrace = received(run.backends());
      }
    }

    @Override
    double failingShare(Backend[] backends) {
      long[] afterGrace = receivedAfterGrace;
      return afterGrace == null ? Double.NaN : failingShare(afterGrace, received(backends), backend);
    }
  }
}
