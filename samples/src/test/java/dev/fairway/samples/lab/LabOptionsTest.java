package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class LabOptionsTest {
  @Test
  void noOptions_isTheQuickProfileOfEverything() {
    LabOptions o = LabOptions.parse();
    assertThat(o.scenarios()).containsExactly(Scenario.values());
    assertThat(o.strategies()).hasSize(9);
    assertThat(o.timeScale()).isEqualTo(LabOptions.QUICK_TIME_SCALE);
    assertThat(o.duration()).isEqualTo(LabOptions.QUICK_DURATION);
    assertThat(o.report).isEqualTo(Path.of("lab-report.html"));
    assertThat(o.maxAttempts()).isEqualTo(3);
  }

  @Test
  void timeScaleAlone_keepsTheThirtySecondWindow() {
    LabOptions o = LabOptions.parse("--time-scale", "1.0");
    assertThat(o.duration()).isEqualTo(Duration.ofSeconds(30));
    assertThat(o.timeScale()).isEqualTo(1.0);
  }

  @Test
  void everyOption_isRead() {
    LabOptions o = LabOptions.parse("--scenario", "failure", "--strategies", "round-robin,key-affinity",
        "--duration", "1500ms", "--time-scale", "0.1", "--workers", "4", "--users", "50", "--csv", "x.csv",
        "--report=r.html", "--max-attempts", "1");
    assertThat(o.scenarios()).containsExactly(Scenario.FAILURE);
    assertThat(o.strategies()).containsExactly("round-robin", "key-affinity");
    assertThat(o.duration()).isEqualTo(Duration.ofMillis(1500));
    assertThat(o.workers()).isEqualTo(4);
    assertThat(o.users(Scenario.FAILURE)).isEqualTo(50);
    assertThat(o.csv).isEqualTo(Path.of("x.csv"));
    assertThat(o.report).isEqualTo(Path.of("r.html"));
    assertThat(o.maxAttempts()).isEqualTo(1);
    assertThat(o.serviceSeconds()).containsExactly(new double[] {0.005, 0.015, 0.03, 0.05}, within(1e-12));
  }

  @Test
  void badValues_nameTheOption() {
    assertThatThrownBy(() -> LabOptions.parse("--strategies", "fastest"))
        .hasMessageStartingWith("--strategies: \"fastest\"");
    assertThatThrownBy(() -> LabOptions.parse("--scenario", "storm")).hasMessageContaining("\"storm\"");
    assertThatThrownBy(() -> LabOptions.parse("--duration", "soon")).hasMessageStartingWith("--duration: \"soon\"");
    assertThatThrownBy(() -> LabOptions.parse("--max-attempts", "0")).hasMessage("--max-attempts: 0 (expected: 1..10)");
    assertThatThrownBy(() -> LabOptions.parse("--workers")).hasMessage("--workers: missing value");
    assertThatThrownBy(() -> LabOptions.parse("--color", "red")).hasMessage("unknown option: --color");
  }

  @Test
  void durations_acceptCommonUnits() {
    assertThat(LabOptions.parseDuration("30s")).isEqualTo(Duration.ofSeconds(30));
    assertThat(LabOptions.parseDuration("0.5s")).isEqualTo(Duration.ofMillis(500));
    assertThat(LabOptions.parseDuration("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(LabOptions.parseDuration("250ms")).isEqualTo(Duration.ofMillis(250));
    assertThat(LabOptions.parseDuration("3")).isEqualTo(Duration.ofSeconds(3));
  }
}
