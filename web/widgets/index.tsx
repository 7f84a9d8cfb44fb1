// The widget renderer: WidgetView picks the renderer of a widget's type and keeps a failure inside
// its own cell (an error boundary), so one odd payload never blanks a dashboard.
import { Component, type ComponentChildren, type ComponentType } from 'preact';
import './widgets.css';
import { Frame } from './frame';
import { leafPaths } from './data/paths';
import type { SeriesData, WidgetViewProps } from './types';
import { KpiWidget } from './kpi';
import { TimeseriesWidget } from './timeseries';
import { CategoryWidget } from './category';
import { TableWidget } from './table';
import { ListWidget } from './list';
import { TextWidget } from './text';
import { DistributionWidget } from './distribution';
import { HeatmapWidget } from './heatmap';
import { GroupWidget } from './group';

export type { WidgetViewProps, WidgetConfig, WidgetContext, SeriesData, TimeRange } from './types';

const RENDERERS: Record<string, ComponentType<WidgetViewProps>> = {
  kpi: KpiWidget,
  timeseries: TimeseriesWidget,
  category: CategoryWidget,
  table: TableWidget,
  list: ListWidget,
  text: TextWidget,
  distribution: DistributionWidget,
  heatmap: HeatmapWidget,
  group: GroupWidget,
};

// Text and group widgets draw without data; the others wait for the series.
const NEEDS_NO_DATA = new Set(['text', 'group']);

export function WidgetView(props: WidgetViewProps) {
  const { widget, error, loading } = props;
  const Renderer = RENDERERS[widget.type];
  if (!Renderer)
    return <Frame widget={widget} state="error" message={`Unknown widget type "${String(widget.type)}"`} />;
  if (!NEEDS_NO_DATA.has(widget.type)) {
    if (error)
      return <Frame widget={widget} state="error" heading="Could not read the data" message={error} />;
    if (loading) return <Frame widget={widget} state="loading" />;
  }
  return (
    <Boundary {...props}>
      <Renderer {...props} />
    </Boundary>
  );
}

interface BoundaryState {
  failure: string | null;
}

class Boundary extends Component<WidgetViewProps & { children: ComponentChildren }, BoundaryState> {
  override state: BoundaryState = { failure: null };

  static override getDerivedStateFromError(err: unknown): BoundaryState {
    return { failure: err instanceof Error ? err.message : String(err) };
  }

  override componentDidUpdate(previous: WidgetViewProps) {
    // A new payload or new data gets a fresh try.
    if (this.state.failure && (previous.widget !== this.props.widget || previous.ctx !== this.props.ctx)) {
      this.setState({ failure: null });
    }
  }

  override render() {
    const { failure } = this.state;
    if (failure)
      return (
        <Frame
          widget={this.props.widget}
          state="error"
          message={`This widget failed to render: ${failure}`}
        />
      );
    return this.props.children;
  }
}

/** Sorted dot paths of every numeric leaf in the series (for path suggestions in the editor). */
export function collectPaths(series: SeriesData): string[] {
  return leafPaths(series);
}
