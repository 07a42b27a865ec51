package dev.fairway.lb.okhttp;

import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;

/**
 * The interceptor's meters for one service. {@link #NOOP} (no registry) does nothing and reads no
 * clock, so a balancer without a registry pays for no metric work.
 */
class CallMetrics {
  static final CallMetrics NOOP = new CallMetrics();

  /** Outcome tag values of {@code fairway.requests}. */
  enum Outcome {
    SUCCESS("success"),
    FAILURE("failure"),
    CANCELLED("cancelled"),
    NO_TARGET("no_target");

    final String tag;

    Outcome(String tag) {
      this.tag = tag;
    }
  }

  /** Retry reasons, the {@code reason} tag of {@code fairway.retries}. */
  static final String CONNECT_FAILURE = "connect_failure";
  static final String IO_FAILURE = "io_failure";

  long startNanos() {
    return 0;
  }

  void attempt(Target target, Outcome outcome, long startNanos) {}

  void noTarget(long startNanos) {}

  void retry(String reason) {}

  void budgetExhausted() {}

  static CallMetrics micrometer(MeterRegistry registry, String service) {
    return new MicrometerCallMetrics(registry, service);
  }

  /**
   * {@code fairway.requests{service,target,outcome}} (one timing per attempt, from sending it until
   * its response body is consumed or closed), {@code fairway.retries{service,reason}} and
   * {@code fairway.retry.budget.exhausted{service}}. Meters are looked up once per target and
   * outcome, then cached.
   */
  static final class MicrometerCallMetrics extends CallMetrics {
    private static final Outcome[] OUTCOMES = Outcome.values();
    private final MeterRegistry registry;
    private final String service;
    private final ConcurrentMap<String, Timer[]> timersByTarget = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> retriesByReason = new ConcurrentHashMap<>();
    private volatile Timer noTarget; // registered on first use: most services never see one
    private final Counter budgetExhausted;

    MicrometerCallMetrics(MeterRegistry registry, String service) {
      this.registry = registry;
      this.service = service;
      this.budgetExhausted =
          Counter.builder("fairway.retry.budget.exhausted")
              .description("Retries not made because the service's retry budget was spent")
              .tag("service", service)
              .register(registry);
    }

    private Timer timer(String target, Outcome outcome) {
      return Timer.builder("fairway.requests")
          .description("Attempts sent through the balancing interceptor, until their body was consumed or closed")
          .tag("service", service)
          .tag("target", target)
          .tag("outcome", outcome.tag)
          .register(registry);
    }

    @Override
    long startNanos() {
      return registry.config().clock().monotonicTime();
    }

    @Override
    void attempt(Target target, Outcome outcome, long startNanos) {
      Timer[] timers = timersByTarget.get(target.id());
      if (timers == null) {
        timers = timersByTarget.computeIfAbsent(target.id(), id -> new Timer[OUTCOMES.length]);
      }
      Timer timer = timers[outcome.ordinal()];
      if (timer == null) {
        timer = timer(target.id(), outcome); // registration is idempotent, so a race is harmless
        timers[outcome.ordinal()] = timer;
      }
      timer.record(registry.config().clock().monotonicTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    void noTarget(long startNanos) {
      Timer timer = noTarget;
      if (timer == null) {
        timer = timer("", Outcome.NO_TARGET);
        noTarget = timer;
      }
      timer.record(registry.config().clock().monotonicTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    void retry(String reason) {
      Counter counter = retriesByReason.get(reason);
      if (counter == null) {
        counter = retriesByReason.computeIfAbsent(reason, r ->
            Counter.builder("fairway.retries")
                .description("Attempts repeated on another target")
                .tag("service", service)
                .tag("reason", r)
                .register(registry));
      }
      counter.increment();
    }

    @Override
    void budgetExhausted() {
      budgetExhausted.increment();
    }
  }
}
