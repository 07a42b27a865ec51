package dev.fairway.lb.hc5;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadBalancerListener;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.OutcomeRule;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * One logical host: its balancer, its retry budget, its call meters (lb-core's {@link CallMeters},
 * which hold the service's {@code fairway.load.reports} counters and listen to the balancer
 * themselves), its {@link OutcomeRule}, and its targets' routes and authorities ({@link
 * TargetRoutes}, the same for the classic and the async client; a departed target's go with it).
 * Thread-safe.
 */
final class ServiceRoute implements LoadBalancerListener {
  private static final System.Logger LOG = System.getLogger(FairwayHttpClient5.class.getName());

  final String host;
  final LoadBalancer loadBalancer;
  final AttemptBudget budget;
  final CallMeters meters;
  final OutcomeRule outcomes;
  final TargetRoutes targets;
  private final AtomicBoolean leakLogged = new AtomicBoolean();

  ServiceRoute(String host, LoadBalancer loadBalancer, double percentCanRetry, int minRetriesPerSecond,
      LongSupplier ticker, int[] failureStatusCodes) {
    this.host = host;
    this.loadBalancer = loadBalancer;
    this.budget = new AttemptBudget(percentCanRetry, minRetriesPerSecond, ticker);
    this.meters = CallMeters.of(loadBalancer);
    this.outcomes = new OutcomeRule(failureStatusCodes, meters.loadReports());
    this.targets = new TargetRoutes(host);
    loadBalancer.addListener(this); // lives as long as the balancer, as the client's handler may
  }

  @Override
  public void targetRemoved(Target target) {
    targets.forget(target);
  }

  @Override
  public void closed() {
    targets.clear();
  }

  /** A response entity became unreachable unclosed and its slot was freed: counted, and logged once per service. */
  void leaked(Target target) {
    meters.leaked();
    if (leakLogged.compareAndSet(false, true)) {
      LOG.log(System.Logger.Level.WARNING, "A response from " + host + " (target " + target.id() + ") was leaked. "
          + "Did you forget to close a response or consume its entity? Its in-flight slot on the target was held "
          + "until now; fairway.leaked.responses counts every such response (this message is logged once per service)");
    }
  }
}
