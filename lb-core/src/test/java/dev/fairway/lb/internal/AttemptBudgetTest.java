package dev.fairway.lb.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class AttemptBudgetTest {
  private static final long SECOND = 1_000_000_000L;
  private final AtomicLong now = new AtomicLong(5 * SECOND);

  @Test
  void withdraw_allowsOneRetryPerFiveRequestsAtTwentyPercent() {
    AttemptBudget budget = new AttemptBudget(0.2, 0, now::get);
    StringBuilder allowed = new StringBuilder();
    for (int i = 0; i < 10; i++) {
      budget.deposit();
      allowed.append(budget.tryWithdraw() ? 'R' : '-');
    }
    assertThat(allowed).hasToString("----R----R");
  }

  @Test
  void reserve_grantsMinRetriesPerSecondOverTheWindowWithoutRequests() {
    AttemptBudget budget = new AttemptBudget(0.2, 10, now::get);
    int granted = 0;
    for (int i = 0; i < 1_000 && budget.tryWithdraw(); i++) {
      granted++;
    }
    assertThat(granted).isEqualTo(10 * AttemptBudget.WINDOW_SECONDS);
  }

  @Test
  void window_expiresDepositsAndWithdrawalsAfterTenSeconds() {
    AttemptBudget budget = new AttemptBudget(1.0, 0, now::get);
    for (int i = 0; i < 5; i++) {
      budget.deposit();
    }
    assertThat(budget.available()).isEqualTo(5);
    now.addAndGet(9 * SECOND);
    assertThat(budget.available()).isEqualTo(5);
    assertThat(budget.tryWithdraw()).isTrue(); // withdrawn in second 14
    assertThat(budget.available()).isEqualTo(4);
    now.addAndGet(SECOND); // second 15: the deposits of second 5 expire, the withdrawal stays
    assertThat(budget.available()).isEqualTo(-1);
    assertThat(budget.tryWithdraw()).isFalse();
    now.addAndGet(9 * SECOND); // second 24: the withdrawal expires too
    assertThat(budget.available()).isZero();
    budget.deposit();
    assertThat(budget.tryWithdraw()).isTrue();
  }

  @Test
  void zeroPercentAndZeroReserve_neverRetries() {
    AttemptBudget budget = new AttemptBudget(0.0, 0, now::get);
    for (int i = 0; i < 100; i++) {
      budget.deposit();
    }
    assertThat(budget.tryWithdraw()).isFalse();
  }

  @Test
  void refund_givesBackTheTokenAWithdrawalTook() {
    AttemptBudget one = new AttemptBudget(0.5, 0, now::get);
    one.deposit();
    one.deposit(); // one whole token
    assertThat(one.tryWithdraw()).isTrue();
    assertThat(one.tryWithdraw()).isFalse();
    one.refund();
    assertThat(one.available()).isEqualTo(1);
    assertThat(one.tryWithdraw()).isTrue();
    assertThat(one.tryWithdraw()).isFalse();
  }
}
