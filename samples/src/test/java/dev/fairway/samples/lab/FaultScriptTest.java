package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Each scenario's fault script acts once, at its scenario's moment, on real loopback backends. */
class FaultScriptTest {
  private final Backend[] backends = new Backend[4];
  private final LabOptions options = LabOptions.parse("--time-scale", "0.1");

  private FaultScript.Run run() throws IOException {
    for (int i = 0; i < backends.length; i++) {
      backends[i] = new Backend(i + 1, TimeUnit.MILLISECONDS.toNanos(5), 2).start();
    }
    return new FaultScript.Run(backends, new LabClient[0], options, System.nanoTime());
  }

  @AfterEach
  void close() {
    for (Backend b : backends) {
      if (b != null) {
        b.close();
      }
    }
  }

  private static boolean accepts(Backend backend) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", backend.port()), 2_000);
      return true;
    } catch (ConnectException refused) {
      return false;
    }
  }

  @Test
  void recovery_killsBackendOneAtOneThird_andRestartsItAtTwoThirds() throws IOException {
    FaultScript.Run run = run();
    FaultScript script = Scenario.RECOVERY.faultScript();
    script.step(0.30, run);
    assertThat(script.faultAtSeconds()).isNaN();
    assertThat(accepts(backends[0])).isTrue();

    script.step(0.34, run);
    assertThat(script.faultAtSeconds()).isNotNaN();
    assertThat(script.inFlightAtKill()).isZero(); // no client had a call out
    assertThat(accepts(backends[0])).isFalse();
    double killedAt = script.faultAtSeconds();

    script.step(0.50, run);
    assertThat(script.restartAtSeconds()).isNaN();
    script.step(0.67, run);
    assertThat(script.restartAtSeconds()).isGreaterThanOrEqualTo(killedAt);
    assertThat(script.faultAtSeconds()).isEqualTo(killedAt);
    assertThat(accepts(backends[0])).isTrue();
  }

  @Test
  void failure_killsBackendOneForGood() throws IOException {
    FaultScript.Run run = run();
    FaultScript script = Scenario.FAILURE.faultScript();
    script.step(0.34, run);
    script.step(0.90, run);
    assertThat(script.faultAtSeconds()).isNotNaN();
    assertThat(script.restartAtSeconds()).isNaN();
    assertThat(accepts(backends[0])).isFalse();
  }

  @Test
  void scenariosWithoutAFault_touchNoBackend() throws IOException {
    FaultScript.Run run = run();
    for (Scenario s : new Scenario[] {Scenario.STEADY, Scenario.FLEET, Scenario.BURST, Scenario.LIGHT}) {
      FaultScript script = s.faultScript();
      script.step(0.5, run);
      script.step(0.99, run);
      assertThat(script.faultAtSeconds()).as(s.id()).isNaN();
      assertThat(script.inFlightAtKill()).isEqualTo(-1);
      assertThat(script.failingShare(backends)).isNaN();
    }
    for (Backend b : backends) {
      assertThat(accepts(b)).isTrue();
    }
  }

  @Test
  void fastfail_failsBackendTwoOnce_andCountsFromTheGraceOn() throws IOException {
    FaultScript.Run run = run();
    FaultScript script = Scenario.FASTFAIL.faultScript();
    script.step(0.2, run);
    assertThat(script.faultAtSeconds()).isNaN();
    script.step(0.34, run);
    double at = script.faultAtSeconds();
    assertThat(at).isNotNaN();
    // The grace (1 s at time scale 1, so 100 ms here) has not passed: nothing is counted yet.
    assertThat(script.failingShare(backends)).isNaN();
    script.step(0.5, run);
    assertThat(script.faultAtSeconds()).isEqualTo(at);
  }
}
