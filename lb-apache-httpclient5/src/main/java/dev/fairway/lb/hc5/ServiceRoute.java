package dev.fairway.lb.hc5;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadBalancerListener;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.LoadReportMeters;
import dev.fairway.lb.internal.OutcomeRule;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * One logical host: its balancer, its retry budget and its {@link OutcomeRule}. Holds the service's
 * {@code fairway.load.reports} counters ({@link LoadReportMeters}) until the balancer closes.
 * Immutable after construction; thread-safe.
 */
final class ServiceRoute {
  private static final System.Logger LOG = System.getLogger(FairwayHttpClient5.class.getName());

  final String host;
  final LoadBalancer loadBalancer;
  final AttemptBudget budget;
  final OutcomeRule outcomes;
  private final AtomicBoolean leakLogged = new AtomicBoolean();

  ServiceRoute(String host, LoadBalancer loadBalancer, double percentCanRetry, int minRetriesPerSecond,
      LongSupplier ticker, int[] failureStatusCodes) {
    this.host = host;
    this.loadBalancer = loadBalancer;
    this.budget = new AttemptBudget(percentCanRetry, minRetriesPerSecond, ticker);
    LoadReportMeters reports = LoadReportMeters.acquire(loadBalancer.meterRegistry().orElse(null), loadBalancer.service());
    this.outcomes = new OutcomeRule(failureStatusCodes, reports);
    loadBalancer.addListener(new LoadBalancerListener() {
      @Override
      public void closed() {
        reports.release();
      }
    });
  }

  /** A response entity became unreachable unclosed and its slot was freed: logged once per service. */
  void leaked(Target target) {
    if (leakLogged.compareAndSet(false, true)) {
      LOG.log(System.Logger.Level.WARNING, "A response from " + host + " (target " + target.id() + ") was leaked. "
          + "Did you forget to close a response or consume its entity? Its in-flight slot on the target was held "
          + "until now (logged once per service)");
    }
  }
}
