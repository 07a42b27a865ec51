package dev.fairway.lb.internal.hedging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.testing.Closer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ServiceHedging} on fake time: the delay is a pure read, maintenance happens only when asked
 * for by name, and a hedge takes a token from both budgets or from neither.
 */
class ServiceHedgingTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  private final Closer closer = new Closer();
  private final AtomicLong now = new AtomicLong();
  private final Target a = Target.of("127.0.0.1", 8081);
  private final Target b = Target.of("127.0.0.1", 8082);
  private final List<String> events = new ArrayList<>();
  /** Fires nothing; records each request to be watched. */
  private final Hedger.Scheduler scheduler = new Hedger.Scheduler() {
    @Override
    public void arm(TimerNode node, long delayNanos) {}

    @Override
    public void disarm(TimerNode node) {}

    @Override
    public void watch(ServiceHedging hedging) {
      events.add("watch");
    }
  };

  @AfterEach
  void closeAll() throws Exception {
    closer.close();
  }

  private ServiceHedging hedging(HedgingPolicy policy, AttemptBudget retries) {
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(a, b).build());
    return new ServiceHedging("orders", policy, lb, HedgeMeters.NOOP, retries, scheduler, Runnable::run, now::get);
  }

  private Runnable release(String name) {
    return () -> events.add("release " + name);
  }

  @Test
  void delay_isAPureRead_theWindowsChangeOnlyInMaintenance() {
    ServiceHedging hedging = hedging(HedgingPolicy.percentile(95.0), new AttemptBudget(0.2, 10, now::get));
    for (int i = 0; i < HedgingPolicy.MIN_SAMPLES; i++) {
      hedging.record(a, 5 * MS);
    }
    now.set(SECOND);

    assertThat(hedging.delayNanos(a)).as("read before maintenance").isEqualTo(-1);
    assertThat(hedging.delayNanos(a)).as("reading twice changes nothing").isEqualTo(-1);
    assertThat(hedging.window.samples()).isZero();

    hedging.maintain(a, now.get());

    assertThat(hedging.window.samples()).isEqualTo(HedgingPolicy.MIN_SAMPLES);
    assertThat(TimeUnit.NANOSECONDS.toMillis(hedging.delayNanos(a))).isEqualTo(5);
    assertThat(TimeUnit.NANOSECONDS.toMillis(hedging.delayNanos(b))).as("b has no window: the service's").isEqualTo(5);
  }

  @Test
  void fixedDelay_isThePolicysDelay_andKeepsNoWindows() {
    ServiceHedging hedging = hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(20)), new AttemptBudget(0.2, 10, now::get));
    hedging.record(a, 5 * MS);
    hedging.maintain(a, now.get());

    assertThat(hedging.delayNanos(a)).isEqualTo(20 * MS);
    assertThat(hedging.window).isNull();
    assertThat(hedging.targetWindows()).isZero();
    assertThat(hedging.tailWaitNanos(a)).isEqualTo(-1);
  }

  @Test
  void aHold_endsInMaintenanceOrOnATick_neverInADelayRead() {
    ServiceHedging hedging = hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withLoserHold(Duration.ofSeconds(3)),
        new AttemptBudget(0.2, 10, now::get));
    hedging.hold(a, release("a"), 0);
    assertThat(events).containsExactly("watch");

    now.set(3 * SECOND);
    hedging.delayNanos(a);
    assertThat(hedging.heldLosers()).as("the delay read released nothing").isEqualTo(1);
    hedging.maintain(a, now.get());
    assertThat(events).containsExactly("watch", "release a");

    hedging.hold(b, release("b"), now.get());
    assertThat(events).as("still watched: no second request").containsExactly("watch", "release a");
    now.set(6 * SECOND - 1);
    assertThat(hedging.tick()).as("b still held").isTrue();
    now.set(6 * SECOND);
    assertThat(hedging.tick()).as("nothing held").isFalse();
    assertThat(events).containsExactly("watch", "release a", "release b");
    assertThat(hedging.unwatched()).as("nothing held since the tick").isFalse();

    hedging.hold(a, release("a2"), now.get());
    assertThat(events).as("unwatched: held again, watched again").endsWith("watch");
  }

  @Test
  void responded_releasesTheCopiesHeldOnItsTargetThatWereSentBeforeIt() {
    ServiceHedging hedging = hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)), new AttemptBudget(0.2, 10, now::get));
    hedging.hold(a, release("a@10"), 10 * MS);
    hedging.hold(b, release("b@10"), 10 * MS);

    hedging.responded(a, 10 * MS); // sent with it: nothing says which came first
    hedging.responded(a, 11 * MS);

    assertThat(events).containsExactly("watch", "release a@10");
    hedging.closed();
    assertThat(events).containsExactly("watch", "release a@10", "release b@10");
    assertThat(hedging.heldLosers()).isZero();
  }

  @Test
  void aHedge_takesATokenFromBothBudgets_orFromNeither() {
    AttemptBudget retries = new AttemptBudget(1.0, 0, now::get);
    ServiceHedging hedging = hedging(HedgingPolicy.fixedDelay(Duration.ofMillis(50)).withBudget(1.0, 0), retries);

    hedging.callStarted(true); // a hedge token; the route's budget is empty
    assertThat(hedging.tryWithdraw()).isFalse();
    retries.deposit();
    assertThat(hedging.tryWithdraw()).as("the hedge token was given back").isTrue();
    assertThat(hedging.tryWithdraw()).isFalse();

    retries.deposit();
    hedging.callStarted(false); // not hedgeable: pays nothing into the hedge budget
    assertThat(hedging.tryWithdraw()).isFalse();
    assertThat(retries.available()).as("the route's token was given back").isEqualTo(1);
  }
}
