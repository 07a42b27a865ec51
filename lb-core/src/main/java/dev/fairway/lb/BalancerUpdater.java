package dev.fairway.lb;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Applies every change to one balancer, one at a time and collapsed, as Finagle's balancer
 * {@code Updater} does: new target lists, health transitions, due time-derived changes. Whoever
 * offers a change tries to become the applier; if another thread is applying, the offer is queued
 * and that thread applies it before it stops. Nobody ever waits: a completion that ejects a target
 * records the transition, offers it, and returns, even while a large rebuild is running elsewhere.
 * Only the latest target list matters, so lists collapse; transitions are each applied (and logged)
 * once.
 *
 * <p>One application: take the latest list and apply it whole ({@link Membership}), apply due
 * time-derived health changes, collect the offered transitions, build the snapshot
 * ({@link SnapshotBuilder}), have the strategy turn it into a selector given the previous one, publish
 * the two together ({@link PublishedSnapshot}) with one volatile write, then log, count and tell
 * listeners.
 * Listener calls therefore come one at a time, after the change, outside any lock.
 */
final class BalancerUpdater {
  private static final System.Logger LOG = System.getLogger(LoadBalancer.class.getName());
  private static final AtomicReferenceFieldUpdater<BalancerUpdater, PublishedSnapshot> PUBLISHED =
      AtomicReferenceFieldUpdater.newUpdater(BalancerUpdater.class, PublishedSnapshot.class, "published");

  private final String service;
  private final LongSupplier ticker;
  private final AttachedStrategy strategy;
  private final SnapshotBuilder builder;
  private final TargetHealth.Rules rules;
  private final PassiveHealth passive;
  private final BalancerMetrics metrics;
  private final List<LoadBalancerListener> listeners = new CopyOnWriteArrayList<>();

  private final AtomicInteger wip = new AtomicInteger();
  private final AtomicReference<List<Target>> pendingList = new AtomicReference<>();
  private final ConcurrentLinkedQueue<HealthTransition> pendingTransitions = new ConcurrentLinkedQueue<>();
  private volatile boolean metricsPending;
  private volatile boolean closed;

  /** The snapshot and its selector, published together via volatile; never mutated after publication. */
  private volatile PublishedSnapshot published;
  /** Written by the applier only. */
  private volatile Membership membership = Membership.NONE;
  /** This client's place among its peers for a subset; null while unknown (or without a subset). */
  private volatile @Nullable PeerPosition position;
  private @Nullable PeerPosition positionLogged; // applier only
  private boolean panicLogged; // applier only

  BalancerUpdater(String service, LongSupplier ticker, AttachedStrategy strategy, SnapshotBuilder builder,
      TargetHealth.Rules rules, PassiveHealth passive, BalancerMetrics metrics) {
    this.service = service;
    this.ticker = ticker;
    this.strategy = strategy;
    this.builder = builder;
    this.rules = rules;
    this.passive = passive;
    this.metrics = metrics;
    long mark = rules.epoch.mark();
    this.published = PublishedSnapshot.of(builder.build(Membership.NONE, ticker.getAsLong()), strategy, null, mark);
  }

  /** What picks read now. */
  PublishedSnapshot published() {
    return published;
  }

  TrackedTarget[] members() {
    return membership.members;
  }

  AutoCloseable addListener(LoadBalancerListener listener) {
    listeners.add(listener);
    return () -> listeners.remove(listener);
  }

  /** A new list from the target source; only the latest one not yet applied is kept. */
  void offerTargets(List<Target> list) {
    pendingList.set(list);
    drain();
  }

  /** A new position from the subset's {@link PeerCoordinate}; empty (or null) for none. */
  void offerPosition(Optional<PeerPosition> next) {
    if (next == null) {
      LOG.log(System.Logger.Level.WARNING, "{0}: the peer coordinate gave null; running without a subset", service);
    }
    position = next == null ? null : next.orElse(null);
    drain();
  }

  void offerTransition(HealthTransition transition) {
    pendingTransitions.add(transition);
    drain();
  }

  /** Time-derived changes are due (a pick saw the snapshot's review time pass). */
  void refresh() {
    drain();
  }

  /** Registers the meters, from the applier, so they match the members exactly. */
  void startMetrics() {
    metricsPending = true;
    drain();
  }

  /** Publishes the closed snapshot at once; the applier applies nothing after it. */
  void close() {
    closed = true;
    published = new PublishedSnapshot(SnapshotBuilder.closed(), null, HealthEpoch.UNSETTLED);
    drain();
    fire(LoadBalancerListener::closed);
    listeners.clear();
  }

  private void drain() {
    if (wip.getAndIncrement() != 0) {
      return; // the applier will run once more and see this change
    }
    int missed = 1;
    do {
      try {
        applyOnce();
      } catch (RuntimeException | LinkageError e) {
        LOG.log(System.Logger.Level.ERROR, service + ": could not apply a change; the last snapshot stays in service", e);
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }

  private void applyOnce() {
    if (closed) {
      pendingList.set(null);
      pendingTransitions.clear();
      return;
    }
    long now = ticker.getAsLong();
    List<HealthTransition> transitions = new ArrayList<>();
    Membership.@Nullable Change change = applyList(now, transitions);
    if (metricsPending) {
      metricsPending = false;
      metrics.start(membership.members);
    }
    for (TrackedTarget t : membership.members) {
      HealthTransition due = t.health.apply(t, TargetHealth.Event.TIME, now, null);
      if (due != null) {
        transitions.add(due);
      }
    }
    for (HealthTransition t; (t = pendingTransitions.poll()) != null; ) {
      if (!t.target.removed) {
        transitions.add(t);
      }
    }
    for (HealthTransition t : transitions) {
      if (t.to == HealthPhase.HALF_OPEN || (t.from == HealthPhase.UNHEALTHY && t.to.inService())) {
        t.target.resetLatency(); // its old latency says nothing about it now: measure it afresh
      }
    }
    if (change != null) {
      // Before publishing: a pick from the new snapshot finds its target's meters (and target tag) in place.
      registerMeters(change);
    }
    publish(now);
    report(change, transitions);
  }

  private void registerMeters(Membership.Change change) {
    for (TrackedTarget t : change.left) {
      guarded(() -> metrics.targetRemoved(t), "removing the meters of " + t.target.id());
    }
    for (TrackedTarget t : change.joined) {
      guarded(() -> metrics.targetAdded(t), "registering the meters of " + t.target.id());
    }
  }

  /** Applies the latest pending list whole, or leaves the membership as it was. */
  private Membership.@Nullable Change applyList(long now, List<HealthTransition> transitions) {
    List<Target> list = pendingList.getAndSet(null);
    if (list == null) {
      return null;
    }
    Membership current = membership;
    boolean warm = current.sawTargets;
    Membership.Change change;
    try {
      change = current.next(service, list, target -> new TrackedTarget(target,
          new TargetHealth(rules, TargetHealth.State.joined(warm, target.healthy(), now, rules.slowStart)),
          passive.newWindow(service, target)));
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, service + ": could not apply a new target list; keeping the last one", e);
      return null;
    }
    change.commit();
    membership = change.next;
    for (TrackedTarget t : change.updated) {
      boolean sick = t.health.state().sourceUnhealthy;
      if (sick == t.target.healthy()) {
        HealthTransition moved = t.health.apply(t,
            sick ? TargetHealth.Event.SOURCE_HEALTHY : TargetHealth.Event.SOURCE_UNHEALTHY, now, null);
        if (moved != null) {
          transitions.add(moved);
        }
      }
    }
    return change;
  }

  private void publish(long now) {
    PublishedSnapshot seen = published;
    long mark = rules.epoch.mark(); // before the build reads any target's health
    PeerPosition at = position;
    TargetSnapshot next = builder.build(membership, now, at);
    PublishedSnapshot out = PublishedSnapshot.of(next, strategy, seen.selector, mark);
    TrackedTarget[] m = next.known;
    for (int i = 0; i < m.length; i++) {
      m[i].pickable = next.knownPickable[i];
    }
    if (closed || !PUBLISHED.compareAndSet(this, seen, out)) {
      return; // closed meanwhile: the closed snapshot stays
    }
    strategy.onPublish();
    if (builder.subsets() && m.length > 0 && !java.util.Objects.equals(at, positionLogged)) {
      positionLogged = at;
      if (at == null) {
        LOG.log(System.Logger.Level.INFO, "{0}: no peer position known: running over all {1} targets without a subset",
            service, m.length);
      } else {
        LOG.log(System.Logger.Level.INFO, "{0}: peer {1} of {2}: subset window of {3} of {4} targets",
            service, at.index(), at.count(), next.members.length, m.length);
      }
    }
    if (next.panic != panicLogged) {
      panicLogged = next.panic;
      int inService = next.panic ? countInService(next, now) : next.pickable.length;
      LOG.log(next.panic ? System.Logger.Level.WARNING : System.Logger.Level.INFO,
          next.panic ? "{0}: only {1} of {2} targets healthy: panic mode, picking across all of them"
              : "{0}: {1} of {2} targets healthy: leaving panic mode",
          service, inService, m.length);
    }
  }

  private static int countInService(TargetSnapshot s, long now) {
    int n = 0;
    for (TrackedTarget t : s.known) {
      if (t.health.phaseAt(now).inService()) {
        n++;
      }
    }
    return n;
  }

  private void report(Membership.@Nullable Change change, List<HealthTransition> transitions) {
    if (change != null) {
      for (TrackedTarget t : change.joined) {
        fire(l -> l.targetAdded(t.target));
      }
      for (TrackedTarget t : change.left) {
        fire(l -> l.targetRemoved(t.target));
      }
    }
    long now = ticker.getAsLong();
    for (HealthTransition t : transitions) {
      String id = t.target.target.id();
      if (t.to == HealthPhase.EJECTED) {
        guarded(() -> metrics.ejected(t.target), "counting an ejection of " + id);
        LOG.log(System.Logger.Level.INFO, "{0}: ejected {1} for {2} ms ({3}, ejection #{4})",
            service, id, t.ejectionNanos / 1_000_000, t.reason, t.ejections);
      } else {
        LOG.log(t.to.inService() ? System.Logger.Level.INFO : System.Logger.Level.WARNING,
            "{0}: {1} {2} -> {3}: {4}", service, id, t.from, t.to, t.reason);
      }
      TargetState from = t.shownBefore;
      TargetState to = t.target.health.stateAt(now);
      if (from != to) {
        fire(l -> l.healthChanged(t.target.target, from, to, t.reason));
      }
    }
  }

  private void guarded(Runnable r, String what) {
    try {
      r.run();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, service + ": " + what + " failed", e);
    }
  }

  private void fire(Consumer<LoadBalancerListener> event) {
    for (LoadBalancerListener l : listeners) {
      try {
        event.accept(l);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, service + ": a LoadBalancerListener failed", e);
      }
    }
  }
}
