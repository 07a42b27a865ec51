package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The servlet load-report filter on embedded Tomcat, with a servlet that starts async, dispatches,
 * and on its async dispatch starts async again (a second async cycle of the same request). By the
 * Servlet specification the filter's listener is not told of the second cycle's end unless it
 * registered again in {@code onStartAsync}; if it did not, the request never leaves the in-flight
 * count and every later report carries one request too many.
 */
class AsyncRestartLoadReportTest {
  private ConfigurableApplicationContext context;

  @AfterEach
  void close() {
    if (context != null) {
      context.close();
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class ServerApp {
    @Bean
    ServletRegistrationBean<HttpServlet> twice() {
      ServletRegistrationBean<HttpServlet> bean = new ServletRegistrationBean<>(new TwoAsyncCycles(), "/twice");
      bean.setAsyncSupported(true);
      return bean;
    }

    @Bean
    ServletRegistrationBean<HttpServlet> plain() {
      return new ServletRegistrationBean<>(new HttpServlet() {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
          response.getWriter().write("plain");
        }
      }, "/plain");
    }
  }

  /** First cycle: start async and dispatch back here. On that async dispatch: start async again and complete it. */
  static final class TwoAsyncCycles extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
      if (request.getDispatcherType() == DispatcherType.REQUEST) {
        AsyncContext first = request.startAsync();
        first.setTimeout(20_000);
        first.dispatch();
        return;
      }
      AsyncContext second = request.startAsync(); // the second async cycle of the same request
      second.setTimeout(20_000);
      second.start(() -> {
        try {
          second.getResponse().getWriter().write("twice");
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        } finally {
          second.complete();
        }
      });
    }
  }

  @Test
  void requestThatRestartsAsync_leavesTheInFlightCount_whenItsSecondCycleCompletes() throws Exception {
    context = new SpringApplicationBuilder(ServerApp.class).properties("server.port=0", "server.address=127.0.0.1",
        "spring.main.web-application-type=servlet", "fairway.server.load-reports.enabled=true",
        "fairway.server.load-reports.workers=4").run();
    int port = Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    for (int i = 0; i < 3; i++) {
      HttpResponse<String> twice = get(http, port, "/twice");
      assertThat(twice.statusCode()).isEqualTo(200);
      assertThat(twice.body()).isEqualTo("twice");
    }

    // Each request leaves the count when its (second) async context completes, just after its
    // response went out: a bounded wait, then the exact count.
    LoadReport load = context.getBean(LoadReport.class);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (load.inFlight() != 0 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(load.inFlight()).isZero();
    assertThat(get(http, port, "/plain").headers().firstValue("endpoint-load-metrics"))
        .hasValue("TEXT application_utilization=0.0, named_metrics.rif=0, named_metrics.workers=4");
  }

  private static HttpResponse<String> get(HttpClient http, int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
