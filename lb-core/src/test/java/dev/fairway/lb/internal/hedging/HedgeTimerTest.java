package dev.fairway.lb.internal.hedging;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * {@link HedgeTimer} without a thread, on fake time: tests call {@link HedgeTimer#runDue} by hand
 * with plain {@link TimerNode}s (lb-okhttp's HedgeTimerTest drives it with real races).
 */
class HedgeTimerTest {
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final AtomicLong now = new AtomicLong();
  private final HedgeTimer timer = new HedgeTimer(null, now::get);
  private final List<String> fired = new ArrayList<>();

  /** A node that records its firing and can be closed (as a race closes its hedge). */
  private final class Node extends TimerNode {
    private final String name;
    volatile boolean pending = true;

    Node(String name) {
      this.name = name;
    }

    @Override
    public boolean pending() {
      return pending;
    }

    @Override
    public void run() {
      pending = false;
      fired.add(name + "@" + TimeUnit.NANOSECONDS.toMillis(now.get()));
    }
  }

  @Test
  void armedNodes_fireAtTheirDeadlines_inDeadlineOrder_notBefore() {
    Node late = new Node("late");
    Node early = new Node("early");
    timer.arm(late, 50 * MS);
    timer.arm(early, 20 * MS);

    now.set(19 * MS);
    assertThat(timer.runDue(now.get())).as("new timers taken in").isTrue();
    assertThat(timer.queued()).isEqualTo(2);
    assertThat(timer.nextWaitNanos(now.get())).isEqualTo(MS);
    assertThat(fired).isEmpty();

    now.set(20 * MS);
    assertThat(timer.runDue(now.get())).isFalse();
    now.set(49 * MS);
    timer.runDue(now.get());
    now.set(50 * MS);
    timer.runDue(now.get());

    assertThat(fired).containsExactly("early@20", "late@50");
    assertThat(timer.queued()).isZero();
    assertThat(timer.nextWaitNanos(now.get())).isEqualTo(HedgeTimer.TICK_NANOS);
  }

  @Test
  void disarmedNode_leavesTheQueueOnTheNextPass_andNeverFires() {
    Node node = new Node("a");
    timer.arm(node, 50 * MS);
    timer.runDue(MS);
    assertThat(timer.queued()).isEqualTo(1);

    node.pending = false; // its owner closes its state first, then disarms
    timer.disarm(node);
    timer.runDue(2 * MS);

    assertThat(timer.queued()).isZero();
    now.set(100 * MS);
    timer.runDue(now.get());
    assertThat(fired).isEmpty();
  }

  @Test
  void nodeDisarmedBeforeTheTimerTookItIn_isDroppedWhenTakenIn() {
    Node node = new Node("a");
    timer.arm(node, 50 * MS);
    node.pending = false;
    timer.disarm(node); // not queued yet: nothing to do

    assertThat(timer.runDue(0)).isTrue();
    assertThat(timer.queued()).isZero();
    timer.runDue(100 * MS);
    assertThat(fired).isEmpty();
  }
}
