package dev.fairway.lb.consul.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class GoDurationTest {
  @Test
  void parsesGoDurations() {
    assertThat(GoDuration.parse("5m")).isEqualTo(Duration.ofMinutes(5));
    assertThat(GoDuration.parse("1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(GoDuration.parse("1500ms")).isEqualTo(Duration.ofMillis(1500));
    assertThat(GoDuration.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(GoDuration.parse("2h45m")).isEqualTo(Duration.ofMinutes(165));
    assertThat(GoDuration.parse("10us")).isEqualTo(Duration.ofNanos(10_000));
    assertThat(GoDuration.parse("0")).isEqualTo(Duration.ZERO);
  }

  @Test
  void rejectsWhatGoRejects() {
    assertThatThrownBy(() -> GoDuration.parse("30")).hasMessage("missing unit in duration \"30\"");
    assertThatThrownBy(() -> GoDuration.parse("5 m")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> GoDuration.parse("5d")).hasMessage("unknown unit \"d\" in duration \"5d\"");
    assertThatThrownBy(() -> GoDuration.parse("")).isInstanceOf(IllegalArgumentException.class);
  }
}
