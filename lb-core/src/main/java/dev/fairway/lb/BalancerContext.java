package dev.fairway.lb;

import java.util.function.LongSupplier;

/** What a strategy may know about the balancer it is attached to. Immutable. */
final class BalancerContext {
  final String service;
  final RandomSource random;
  final LongSupplier ticker;
  final String localZone;
  /** Time constant of the latency average. */
  final double tauNanos;
  /** Whether other clients load this balancer's targets: the one mutable, shared part. */
  final OtherClients otherClients = new OtherClients();
  /** How far load reports count for the strategies that compare counts: shared, like {@link #otherClients}. */
  final ReportJudge reportJudge = new ReportJudge();

  BalancerContext(String service, RandomSource random, LongSupplier ticker, String localZone, double tauNanos) {
    this.service = service;
    this.random = random;
    this.ticker = ticker;
    this.localZone = localZone;
    this.tauNanos = tauNanos;
  }
}
