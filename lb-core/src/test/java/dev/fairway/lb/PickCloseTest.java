package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Pick#close()}: frees the slot only if nothing completed the pick, so a try-with-resources
 * block cannot forget a pick. A second pick on the same target stays open throughout, so that a
 * slot freed twice would show as one call too few.
 */
class PickCloseTest {
  private final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();
  private final LoadBalancer lb = Fixtures.builder(ticker, 7).targets(t(1)).strategy(Strategy.roundRobin()).build();

  @AfterEach
  void close() {
    lb.close();
  }

  private TargetStatus status() {
    return lb.status().get(0);
  }

  @Test
  void closeWithoutCompletion_freesTheSlotExactlyOnce_andRecordsNothing() throws Exception {
    Pick other = lb.pick();
    Pick pick = lb.pick();
    assertThat(status().inFlight()).isEqualTo(2);
    ticker.advanceMillis(40);
    pick.close();
    assertThat(status().inFlight()).isEqualTo(1);
    assertThat(status().latencyEwmaMillis()).isZero(); // a release: no latency sample
    assertThat(status().state()).isEqualTo(TargetState.HEALTHY);
    pick.close();
    assertThat(status().inFlight()).isEqualTo(1); // the second close does nothing
    other.release();
    assertThat(status().inFlight()).isZero();
  }

  @Test
  void successThenClose_closeIsANoOp() throws Exception {
    Pick other = lb.pick();
    Pick pick = lb.pick();
    ticker.advanceMillis(40);
    pick.success();
    double latency = status().latencyEwmaMillis();
    assertThat(latency).isPositive();
    assertThat(status().inFlight()).isEqualTo(1);
    pick.close();
    assertThat(status().inFlight()).isEqualTo(1);
    assertThat(status().latencyEwmaMillis()).isEqualTo(latency);
    other.release();
    assertThat(status().inFlight()).isZero();
  }

  @Test
  void failureThenClose_closeIsANoOp_andTheFailureStands() throws Exception {
    Pick other = lb.pick();
    Pick pick = lb.pick();
    pick.failure(new ConnectException("Connection refused"));
    assertThat(status().state()).isEqualTo(TargetState.EJECTED);
    assertThat(status().inFlight()).isEqualTo(1);
    pick.close();
    assertThat(status().inFlight()).isEqualTo(1);
    assertThat(status().state()).isEqualTo(TargetState.EJECTED);
    other.close();
    assertThat(status().inFlight()).isZero();
  }

  @Test
  void tryWithResources_freesTheSlotWhenTheCallThrows() throws Exception {
    Pick other = lb.pick();
    assertThatThrownBy(() -> {
      try (Pick pick = lb.pick()) {
        assertThat(status().inFlight()).isEqualTo(2);
        throw new IOException("the call failed before any outcome was reported");
      }
    }).isInstanceOf(IOException.class);
    assertThat(status().inFlight()).isEqualTo(1);
    other.close();
    assertThat(status().inFlight()).isZero();
  }

  @Test
  void tryWithResources_afterASuccess_countsTheSuccessOnce() throws Exception {
    try (Pick pick = lb.pick()) {
      ticker.advanceMillis(20);
      pick.success();
    }
    assertThat(status().inFlight()).isZero();
    assertThat(status().latencyEwmaMillis()).isPositive();
  }

  @Test
  void closeAfterSupersededHoldingSlot_freesTheHeldSlot() throws Exception {
    Pick pick = lb.pick();
    pick.supersededHoldingSlot();
    assertThat(status().inFlight()).isEqualTo(1);
    pick.close();
    assertThat(status().inFlight()).isZero();
  }
}
