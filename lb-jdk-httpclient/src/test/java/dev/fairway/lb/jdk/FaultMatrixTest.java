package dev.fairway.lb.jdk;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.testing.FaultServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The plain JDK client against the JDK client through {@link FairwayHttpClient}, one fault at a
 * time, in one run, as lb-okhttp's fault matrix does for OkHttp. Two loopback targets: one healthy,
 * one that injects the fault ({@link FaultServer}, or nothing listening at all). For GET and for
 * POST, {@value #CALLS} calls with the plain client on the healthy target alone, then {@value
 * #CALLS} through Fairway over both targets (round robin, so the faulty target is picked by the
 * second call at the latest; default passive health, retries and budget). Each client has a 1 s
 * connect timeout; each request a timeout of 500 ms where the fault is headers that never come and
 * 5 s elsewhere (the JDK's client has no read timeout: the request's is the only one). Half the
 * calls are {@code send}, half {@code sendAsync}. A call fails when it throws, its status is not
 * 200, or its body cannot be read to the end.
 *
 * <ul>
 *   <li>GET: Fairway fails no more calls than the plain client on the healthy target alone.
 *   <li>POST: no call reached both servers, and every call that failed through Fairway reached the
 *       faulty server (nothing lost before the send: a refused connection is retried elsewhere).
 *   <li>The faulty target was tried by Fairway; every in-flight slot is freed.
 * </ul>
 *
 * <p>The table is printed and written to {@code target/fault-matrix.md}.
 */
class FaultMatrixTest {
  static final int CALLS = 10;
  private static final String SERVICE = "orders";
  private static final Map<String, String> TABLE = new ConcurrentSkipListMap<>();

  enum Fault {
    REFUSED("refused connection", null),
    RESET_BEFORE_RESPONSE("reset before any response byte", FaultServer.Behaviour.RESET_BEFORE_RESPONSE),
    RESET_AFTER_HEADERS("reset after the headers", FaultServer.Behaviour.RESET_AFTER_HEADERS),
    TRUNCATED_BODY("truncated body (10 of 100 bytes)", FaultServer.Behaviour.TRUNCATED_BODY),
    HEADERS_NEVER_COME("headers never come (request timeout 500 ms)", FaultServer.Behaviour.HEADERS_NEVER_COME),
    GARBAGE_STATUS_LINE("garbage status line", FaultServer.Behaviour.GARBAGE_STATUS_LINE),
    UNAVAILABLE_AND_CLOSE("503 with Connection: close", FaultServer.Behaviour.UNAVAILABLE_AND_CLOSE),
    SLOW_BODY("very slow body (a byte every 30 ms)", FaultServer.Behaviour.SLOW_BODY),
    STALE_KEEP_ALIVE("stale keep-alive connections", FaultServer.Behaviour.CLOSE_AFTER_RESPONSE);

    final String label;
    final FaultServer.@Nullable Behaviour behaviour;

    Fault(String label, FaultServer.@Nullable Behaviour behaviour) {
      this.label = label;
      this.behaviour = behaviour;
    }
  }

  @ParameterizedTest
  @EnumSource(Fault.class)
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void fairway_neverFailsMoreGetsThanThePlainClient_andNeverResendsAPost(Fault fault) throws Exception {
    try (FaultServer healthy = FaultServer.start(FaultServer.Behaviour.HEALTHY);
        FaultServer faulty = fault.behaviour == null ? null : FaultServer.start(fault.behaviour)) {
      int faultyPort = faulty == null ? FaultServer.refusedPort() : faulty.port();
      Duration timeout = Duration.ofMillis(fault == Fault.HEADERS_NEVER_COME ? 500 : 5_000);
      for (String method : List.of("GET", "POST")) {
        String prefix = fault.name() + "-" + method + "-";
        List<String> plainFailures = sendAll(newClient(), "http://127.0.0.1:" + healthy.port(), method, timeout,
            prefix + "plain-");

        List<String> fairwayFailures;
        TargetState faultyState;
        try (LoadBalancer lb = LoadBalancer.builder(SERVICE)
            .targets(Target.of("127.0.0.1", faultyPort), Target.of("127.0.0.1", healthy.port()))
            .strategy(Strategy.roundRobin())
            .build()) {
          FairwayHttpClient balanced = FairwayHttpClient.builder(newClient()).service(SERVICE, lb).build();
          fairwayFailures = sendAll(balanced, "http://" + SERVICE, method, timeout, prefix + "fairway-");
          assertThat(lb.status().stream().mapToInt(TargetStatus::inFlight).sum())
              .as("in flight after %s %s", fault, method).isZero();
          faultyState = lb.status().stream().filter(s -> s.target().port() == faultyPort).findFirst().orElseThrow().state();
        }

        int atFaulty = faulty == null ? 0 : faulty.receivedWithPrefix(prefix + "fairway-");
        TABLE.put(String.format(Locale.ROOT, "%02d-%s", fault.ordinal() * 2 + (method.equals("GET") ? 0 : 1), method),
            String.format(Locale.ROOT, "| %s | %s | %d | %d | %d | %d | %s |", fault.label, method, CALLS,
                plainFailures.size(), fairwayFailures.size(), atFaulty, firstFailure(fairwayFailures)));
        String context = String.format("%s %s: plain failed %s; Fairway failed %s", fault, method, plainFailures,
            fairwayFailures);

        if (faulty == null) {
          assertThat(faultyState).as("the refused target was tried and ejected (%s)", context).isEqualTo(TargetState.EJECTED);
        } else {
          assertThat(atFaulty).as("Fairway tried the faulty target (%s)", context).isPositive();
        }
        if (method.equals("GET")) {
          assertThat(fairwayFailures.size()).as(context).isLessThanOrEqualTo(plainFailures.size());
          continue;
        }
        for (int i = 0; i < CALLS; i++) {
          String id = prefix + "fairway-" + i;
          int servers = (healthy.received(id) > 0 ? 1 : 0) + (faulty != null && faulty.received(id) > 0 ? 1 : 0);
          assertThat(servers).as("servers %s reached (%s)", id, context).isLessThanOrEqualTo(1);
        }
        for (String failure : fairwayFailures) {
          String id = failure.substring(0, failure.indexOf(' '));
          assertThat(faulty != null && faulty.received(id) > 0)
              .as("failed POST %s reached the faulty server, not lost before the send (%s)", id, context).isTrue();
        }
      }
    }
  }

  @AfterAll
  static void printTable() throws IOException {
    StringBuilder table = new StringBuilder()
        .append("| fault | method | calls | plain JDK client failures (healthy target alone) | Fairway failures (both targets)"
            + " | requests at the faulty target | what a failed Fairway call saw |\n")
        .append("|---|---|---|---|---|---|---|\n");
    TABLE.values().forEach(row -> table.append(row).append('\n'));
    System.out.println(table);
    Path target = Path.of("target");
    if (Files.isDirectory(target)) {
      Files.writeString(target.resolve("fault-matrix.md"), table);
    }
  }

  private static HttpClient newClient() {
    return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).version(HttpClient.Version.HTTP_1_1).build();
  }

  private static String firstFailure(List<String> failures) {
    if (failures.isEmpty()) {
      return "";
    }
    String first = failures.get(0);
    return first.substring(first.indexOf(' ') + 1).replace("|", "/");
  }

  /** Sends {@value #CALLS} calls one after another, even ones with send, odd ones with sendAsync; the failed ones as "id what". */
  private static List<String> sendAll(HttpClient client, String base, String method, Duration timeout, String idPrefix)
      throws InterruptedException {
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      String id = idPrefix + i;
      HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + "/work"))
          .header(FaultServer.CALL_HEADER, id).timeout(timeout);
      if (method.equals("POST")) {
        request.POST(BodyPublishers.ofString("amount=5"));
      }
      try {
        HttpResponse<String> response = i % 2 == 0
            ? client.send(request.build(), BodyHandlers.ofString())
            : client.sendAsync(request.build(), BodyHandlers.ofString()).get(30, TimeUnit.SECONDS);
        if (response.statusCode() != 200) {
          failures.add(id + " HTTP " + response.statusCode());
        } else if (response.body().isEmpty()) {
          failures.add(id + " empty body");
        }
      } catch (IOException e) {
        failures.add(id + " " + e);
      } catch (ExecutionException e) {
        failures.add(id + " " + e.getCause());
      } catch (java.util.concurrent.TimeoutException e) {
        failures.add(id + " no answer in 30 s");
      }
    }
    return failures;
  }
}
