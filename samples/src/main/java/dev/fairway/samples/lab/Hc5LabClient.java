package dev.fairway.samples.lab;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.hc5.AffinityKey;
import dev.fairway.lb.hc5.FairwayHttpClient5;
import java.io.IOException;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.util.Timeout;

/**
 * {@code --client hc5}: a classic Apache HttpClient 5 whose exec chain {@link FairwayHttpClient5}
 * customized, over its own {@link LoadBalancer} (built by {@link ScenarioRun} as for OkHttp). Its
 * connection pool holds a connection for every user of the client and the OkHttp client's margin
 * ({@code users + 64} in all and per route, as the OkHttp client's dispatcher and pool), so a call
 * never waits for a lease; connect timeout 2 s and socket and response timeouts 60 s, as OkHttp's
 * connect and read timeouts.
 *
 * <p>The adapter counts only load reports: an {@link AttemptCounter}, an exec chain element just
 * after Fairway's, sees each attempt of a call (the classic chain runs them all on the caller's
 * thread), and so counts the retries.
 */
final class Hc5LabClient implements LabClient {
  /** The lab's element's name in HttpClient's exec chain. */
  static final String ATTEMPTS_EXEC_NAME = "lab-attempts";
  private static final Timeout CONNECT_TIMEOUT = Timeout.ofSeconds(2);
  private static final Timeout READ_TIMEOUT = Timeout.ofSeconds(60);
  private static final String WORK = "http://" + ScenarioRun.SERVICE + "/work";

  private final LoadBalancer balancer;
  private final AttemptCounter attempts = new AttemptCounter();
  private final CloseableHttpClient client;

  /**
   * With {@code keyed} (the key strategies), each call's user header is its affinity key, as the
   * OkHttp client's interceptor reads it.
   */
  Hc5LabClient(LoadBalancer balancer, int users, int maxAttempts, boolean keyed) {
    this.balancer = balancer;
    FairwayHttpClient5.Builder builder =
        FairwayHttpClient5.builder().service(ScenarioRun.SERVICE, balancer).maxAttempts(maxAttempts);
    if (keyed) {
      builder.affinityKey(AffinityKey.header(ScenarioRun.USER_HEADER));
    }
    FairwayHttpClient5 fairway = builder.build();
    this.client = fairway.customize(HttpClients.custom())
        .addExecInterceptorAfter(FairwayHttpClient5.EXEC_NAME, ATTEMPTS_EXEC_NAME, attempts)
        .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
            .setMaxConnTotal(users + 64)
            .setMaxConnPerRoute(users + 64)
            .setDefaultConnectionConfig(
                ConnectionConfig.custom().setConnectTimeout(CONNECT_TIMEOUT).setSocketTimeout(READ_TIMEOUT).build())
            .build())
        .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(READ_TIMEOUT).build())
        .build();
  }

  @Override
  public Call caller(String user) {
    return () -> {
      attempts.startCall();
      HttpGet get = new HttpGet(WORK); // a request is mutable: one per call
      get.setHeader(ScenarioRun.USER_HEADER, user);
      return client.execute(get, response -> {
        EntityUtils.consume(response.getEntity());
        Header backend = response.getFirstHeader(Backend.BACKEND_HEADER);
        return new Reply(response.getCode(), backend == null ? null : backend.getValue());
      });
    };
  }

  @Override
  public int inFlight(int port) {
    return ScenarioRun.inFlight(balancer, port);
  }

  @Override
  public long retries() {
    return attempts.retries.sum();
  }

  /** The classic chain cannot hedge (lb-apache-httpclient5's README). */
  @Override
  public long hedgesSent() {
    return 0;
  }

  @Override
  public void close() {
    client.close(CloseMode.IMMEDIATE);
    balancer.close();
  }

  /** Counts each attempt that Fairway's element sends down the chain; passes it on unchanged. */
  static final class AttemptCounter implements ExecChainHandler {
    /** Attempts the current thread's call has made so far (the calls of one user run on its thread). */
    private static final ThreadLocal<int[]> ATTEMPTS = ThreadLocal.withInitial(() -> new int[1]);
    final LongAdder retries = new LongAdder();

    void startCall() {
      ATTEMPTS.get()[0] = 0;
    }

    @Override
    public ClassicHttpResponse execute(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
        throws IOException, HttpException {
      if (ATTEMPTS.get()[0]++ > 0) {
        retries.increment();
      }
      return chain.proceed(request, scope);
    }
  }
}
