package dev.fairway.lb.spring;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Sets ORCA's {@code endpoint-load-metrics} header ({@link LoadReport}) on every response of a
 * servlet application. First in the filter chain, so a request counts as in flight from the moment
 * it enters the application until its response is complete (for an async request, until the async
 * context completes).
 *
 * <p>When the header is set: just before the response can commit, i.e. when the application first
 * asks for the body stream or writer, flushes, or sends an error, and otherwise when the chain
 * returns. So the count is the load as the response leaves, which is what the caller that reads it
 * wants to know, and the header is always in time (a header set after the commit would be lost).
 * Setting it at the start instead would report the load the request found on arrival, stale by the
 * whole service time. A response the application commits by a path the wrapper does not see
 * ({@code sendRedirect}) goes without a report.
 */
final class LoadReportFilter extends OncePerRequestFilter implements Ordered {
  private final LoadReport load;

  LoadReportFilter(LoadReport load) {
    this.load = load;
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE;
  }

  @Override
  protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    load.started();
    AtomicBoolean ended = new AtomicBoolean();
    ReportingResponse reporting = new ReportingResponse(response, load);
    try {
      chain.doFilter(request, reporting);
    } finally {
      if (request.isAsyncStarted()) {
        request.getAsyncContext().addListener(new EndOfRequest(ended));
      } else {
        reporting.report();
        end(ended);
      }
    }
  }

  /**
   * Ends the request's count when its async processing ends. A request may start async again (on
   * its async dispatch, say): the container then calls {@link #onStartAsync} and, by the Servlet
   * specification, forgets this listener unless it registers again with the new cycle's context,
   * so it does, and the count ends with the last cycle.
   */
  private final class EndOfRequest implements AsyncListener {
    private final AtomicBoolean ended;

    EndOfRequest(AtomicBoolean ended) {
      this.ended = ended;
    }

    @Override
    public void onComplete(AsyncEvent event) {
      end(ended);
    }

    @Override
    public void onTimeout(AsyncEvent event) {
      end(ended);
    }

    @Override
    public void onError(AsyncEvent event) {
      end(ended);
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
      event.getAsyncContext().addListener(this);
    }
  }

  private void end(AtomicBoolean ended) {
    if (ended.compareAndSet(false, true)) {
      load.ended();
    }
  }

  /** Sets the header once, before the first thing that can commit the response. */
  static final class ReportingResponse extends HttpServletResponseWrapper {
    private final LoadReport load;
    private boolean reported; // one request's response is written by one thread at a time

    ReportingResponse(HttpServletResponse response, LoadReport load) {
      super(response);
      this.load = load;
    }

    void report() {
      if (!reported) {
        reported = true;
        if (!isCommitted()) {
          setHeader(LoadReport.HEADER, load.header());
        }
      }
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
      report();
      return super.getOutputStream();
    }

    @Override
    public PrintWriter getWriter() throws IOException {
      report();
      return super.getWriter();
    }

    @Override
    public void flushBuffer() throws IOException {
      report();
      super.flushBuffer();
    }

    @Override
    public void sendError(int sc) throws IOException {
      report();
      super.sendError(sc);
    }

    @Override
    public void sendError(int sc, String msg) throws IOException {
      report();
      super.sendError(sc, msg);
    }
  }
}
