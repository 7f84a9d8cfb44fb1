import { render } from 'preact';
import './styles/theme.css';
render(<p>hello</p>, document.getElementById('app')!);
