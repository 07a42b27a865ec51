package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A Boot web application with {@code fairway.server.load-reports.enabled=true}, servlet and reactive,
 * called by a Fairway client (lb-okhttp's interceptor, which reads the report): the client's balancer
 * sees the server's own count of requests in flight.
 */
class LoadReportEndToEndTest {
  private ConfigurableApplicationContext context;
  private LoadBalancer balancer;

  @AfterEach
  void close() {
    if (balancer != null) {
      balancer.close();
    }
    if (context != null) {
      context.close();
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Work.class)
  static class ServerApp {}

  @RestController
  static class Work {
    static volatile CompletableFuture<String> held = new CompletableFuture<>();
    static volatile CountDownLatch holding = new CountDownLatch(1);

    /** Answers when the test completes {@link #held}: an async request on a servlet server. */
    @GetMapping("/hold")
    Mono<String> hold() {
      holding.countDown();
      return Mono.fromFuture(held);
    }

    @GetMapping("/work")
    String work() {
      return "done";
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"servlet", "reactive"})
  void fairwayClient_readsTheServersInFlightCount(String stack) throws Exception {
    Work.held = new CompletableFuture<>();
    Work.holding = new CountDownLatch(1);
    context = new SpringApplicationBuilder(ServerApp.class).properties("server.port=0",
        "server.address=127.0.0.1", "spring.main.web-application-type=" + stack,
        "fairway.server.load-reports.enabled=true", "fairway.server.load-reports.workers=4").run();
    int port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));

    OkHttpClient plain = new OkHttpClient.Builder().callTimeout(Duration.ofSeconds(20)).build();
    try (Response r = plain.newCall(new Request.Builder().url("http://127.0.0.1:" + port + "/work").build()).execute()) {
      assertThat(r.body().string()).isEqualTo("done");
      assertThat(r.header("endpoint-load-metrics"))
          .isEqualTo("TEXT application_utilization=0.0, named_metrics.rif=0, named_metrics.workers=4");
    }

    awaitServerInFlight(0);

    balancer = LoadBalancer.builder("orders").targets(Target.of("127.0.0.1", port)).build();
    OkHttpClient client = plain.newBuilder()
        .addInterceptor(LoadBalancingInterceptor.builder().service("orders", balancer).build()).build();
    CompletableFuture<String> heldAnswer = new CompletableFuture<>();
    client.newCall(new Request.Builder().url("http://orders/hold").build()).enqueue(new Callback() {
      @Override
      public void onFailure(Call call, IOException e) {
        heldAnswer.completeExceptionally(e);
      }

      @Override
      public void onResponse(Call call, Response response) throws IOException {
        try (response) {
          heldAnswer.complete(response.header("endpoint-load-metrics"));
        }
      }
    });
    assertThat(Work.holding.await(20, TimeUnit.SECONDS)).isTrue();
    awaitServerInFlight(1); // the held request, alone

    assertThat(get(client, "http://orders/work")).isEqualTo("done");
    TargetStatus status = balancer.status().get(0);
    assertThat(status.reportedInFlight()).isEqualTo(1.0); // the held request; the answered one excluded
    assertThat(status.reportedUtilization()).isEqualTo(0.25);

    awaitServerInFlight(1); // the answered call may leave the server's count just after its response
    Work.held.complete("released");
    assertThat(heldAnswer.get(20, TimeUnit.SECONDS))
        .isEqualTo("TEXT application_utilization=0.0, named_metrics.rif=0, named_metrics.workers=4");
    awaitServerInFlight(0);
    assertThat(get(client, "http://orders/work")).isEqualTo("done");
    assertThat(balancer.status().get(0).reportedInFlight()).isEqualTo(0.0);
  }

  /**
   * A request leaves the server's count when its exchange (or async context) completes, just after
   * its response went out: a bounded wait for the count the next step depends on.
   */
  private void awaitServerInFlight(int expected) throws InterruptedException {
    LoadReport load = context.getBean(LoadReport.class);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (load.inFlight() != expected && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(load.inFlight()).isEqualTo(expected);
  }

  private static @Nullable String get(OkHttpClient client, String url) throws IOException {
    try (Response r = client.newCall(new Request.Builder().url(url).build()).execute()) {
      return r.body().string();
    }
  }
}
