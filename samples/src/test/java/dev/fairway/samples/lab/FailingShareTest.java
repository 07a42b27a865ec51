package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class FailingShareTest {
  @Test
  void failingShare_isTheFailingBackendsShareOfRequestsBetweenTheCounts() {
    long[] afterGrace = {100, 40, 30, 20};
    long[] atEnd = {1100, 50, 530, 320};
    // 10 of 1000 + 10 + 500 + 300 = 1810 requests reached backend-2.
    assertThat(FaultScript.failingShare(afterGrace, atEnd, 1)).isCloseTo(10.0 / 1810, within(1e-12));
  }

  @Test
  void failingShare_isNaNWhenNoRequestArrived() {
    long[] counts = {5, 5, 5, 5};
    assertThat(FaultScript.failingShare(counts, counts.clone(), 1)).isNaN();
  }
}
