package dev.fairway.lb.spring;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The picks of one service that no lifecycle callback has completed yet, so that none holds its
 * in-flight slot forever. Spring Cloud LoadBalancer does not always complete what it chose: code
 * may call {@code LoadBalancerClient.choose()} and never execute, and a reactive call cancelled
 * before its response (a timeout, a client that went away) gets neither {@code doOnError} nor
 * {@code doOnSuccess}. Such a pick would count as a call in flight for good and steer every
 * load-aware strategy away from its instance.
 *
 * <p>So a pick older than the timeout is released (as a cancelled call: no latency, no failure),
 * counted in {@code fairway.picks.abandoned} (tag {@code service}) and the first one logged. The
 * check runs on the pick path at most once a second and costs nothing in between; there is no
 * thread. Thread-safe.
 */
final class OutstandingPicks {
  private static final Log LOG = LogFactory.getLog(OutstandingPicks.class);
  private static final long SWEEP_EVERY_NANOS = 1_000_000_000L;

  private final String service;
  private final long timeoutNanos;
  private final LongSupplier ticker;
  private final Set<FairwayServiceInstance> open = ConcurrentHashMap.newKeySet();
  private final AtomicLong nextSweep;
  private final @Nullable Counter abandoned;
  private volatile boolean logged;

  OutstandingPicks(String service, long timeoutNanos, LongSupplier ticker, @Nullable MeterRegistry registry) {
    this.service = service;
    this.timeoutNanos = timeoutNanos;
    this.ticker = ticker;
    this.nextSweep = new AtomicLong(ticker.getAsLong() + SWEEP_EVERY_NANOS);
    this.abandoned = registry == null ? null
        : Counter.builder("fairway.picks.abandoned").description("Picks released after no completion came in time")
            .tag("service", service).register(registry);
  }

  void add(FairwayServiceInstance instance) {
    open.add(instance);
  }

  void remove(FairwayServiceInstance instance) {
    open.remove(instance);
  }

  int size() {
    return open.size();
  }

  /** Releases the picks older than the timeout, if a second passed since the last look. */
  void maybeSweep(long now) {
    long due = nextSweep.get();
    if (now - due < 0 || !nextSweep.compareAndSet(due, now + SWEEP_EVERY_NANOS)) {
      return;
    }
    sweep(now);
  }

  /** Releases the picks older than the timeout; returns how many. */
  int sweep(long now) {
    int released = 0;
    for (FairwayServiceInstance instance : open) {
      if (now - instance.pickedAtNanos >= timeoutNanos && instance.abandon()) {
        released++;
        if (abandoned != null) {
          abandoned.increment();
        }
        if (!logged) {
          logged = true;
          LOG.warn("Fairway: released a pick of " + service + " on " + instance.target().id()
              + " that no completion reached within " + (timeoutNanos / 1_000_000) + " ms (counted in "
              + "fairway.picks.abandoned; later ones are not logged)");
        }
      }
    }
    return released;
  }

  /** Releases every open pick (the balancer is closing). */
  void releaseAll() {
    for (FairwayServiceInstance instance : open) {
      instance.release();
    }
  }

  long now() {
    return ticker.getAsLong();
  }
}
