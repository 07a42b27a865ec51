package dev.fairway.lb.internal.hedging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link HeldLosers} on fake time: which completion releases which held copy, and when a hold ends. */
class HeldLosersTest {
  private static final long HOLD = TimeUnit.SECONDS.toNanos(10);
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final Target a = Target.of("127.0.0.1", 8081);
  private final Target b = Target.of("127.0.0.1", 8082);
  private final List<String> released = new ArrayList<>();
  private final HeldLosers losers = new HeldLosers(HOLD);

  private Runnable release(String name) {
    return () -> released.add(name);
  }

  @Test
  void aHeldCopy_isReleasedByACopySentLaterToTheSameTarget_notByOneSentBefore() {
    losers.hold(a, release("a@10"), 10 * MS, 50 * MS);
    assertThat(losers.held()).isEqualTo(1);

    losers.completed(a, 5 * MS, 60 * MS); // sent before the held copy: the server may not have got to it
    losers.completed(a, 10 * MS, 61 * MS); // sent at the same time: nothing says which came first
    assertThat(released).isEmpty();

    losers.completed(a, 11 * MS, 62 * MS);
    assertThat(released).containsExactly("a@10");
    assertThat(losers.held()).isZero();
    assertThat(losers.isEmpty()).isTrue();

    losers.completed(a, 12 * MS, 63 * MS);
    assertThat(released).containsExactly("a@10"); // released once
  }

  @Test
  void anAnswerFromAnotherTarget_releasesNothing_andEachCopyGoesWithItsOwnTarget() {
    losers.hold(a, release("a@10"), 10 * MS, 50 * MS);
    losers.hold(b, release("b@20"), 20 * MS, 50 * MS);
    losers.hold(a, release("a@30"), 30 * MS, 50 * MS);

    losers.completed(b, 40 * MS, 60 * MS);
    assertThat(released).containsExactly("b@20");

    losers.completed(a, 25 * MS, 61 * MS); // after a@10, before a@30
    assertThat(released).containsExactly("b@20", "a@10");
    assertThat(losers.held()).isEqualTo(1);
  }

  @Test
  void aCopyNobodyGetsPast_isReleasedWhenItsHoldEnds() {
    losers.hold(a, release("a@0"), 0, 0);
    losers.hold(b, release("b@5s"), 0, TimeUnit.SECONDS.toNanos(5));

    losers.expire(HOLD - 1);
    assertThat(released).isEmpty();
    losers.expire(HOLD);
    assertThat(released).containsExactly("a@0");
    losers.completed(a, 0, HOLD + TimeUnit.SECONDS.toNanos(5) - 1); // sent with b's: releases nothing on b
    assertThat(released).containsExactly("a@0");
    losers.completed(a, 0, HOLD + TimeUnit.SECONDS.toNanos(5)); // any completion also ends holds that are over
    assertThat(released).containsExactly("a@0", "b@5s");
    assertThat(losers.isEmpty()).isTrue();
  }

  @Test
  void aTargetThatLeft_hasItsHeldCopiesReleased_andOneHeldAfterwardsIsHeldAgain() {
    losers.hold(a, release("a@1"), MS, MS);
    losers.hold(a, release("a@2"), 2 * MS, 2 * MS);
    losers.forget(a);
    assertThat(released).containsExactly("a@1", "a@2");
    assertThat(losers.held()).isZero();

    losers.hold(a, release("a@3"), 3 * MS, 3 * MS); // the same id back in discovery
    assertThat(losers.held()).isEqualTo(1);
    losers.completed(a, 4 * MS, 4 * MS);
    assertThat(released).containsExactly("a@1", "a@2", "a@3");
  }

  @Test
  void aHoldOfZero_holdsNothing() {
    assertThat(new HeldLosers(0).holds()).isFalse();
    assertThat(losers.holds()).isTrue();
  }
}
